import type { NanpCountry } from '../../domain/phone-number/north-american-area-codes.js';
import { phoneNumberDecider, phoneNumberStream } from '../../domain/phone-number/phone-number.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { AccountQueries } from '../accounts/account-queries.port.js';
import type { AgentQueries } from '../agents/agent-queries.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { NumberQueries, PhoneNumberView } from './number-queries.port.js';

export type NumberImport = Readonly<{
  accountId: string;
  phoneNumber: string;
  country: NanpCountry;
  carrierId: string;
  agentId: string | null;
}>;

const invalid = (field: string, message: string) => new DomainError('VALIDATION_ERROR', message, [{ field, message, type: 'value_error' }]);

/**
 * The operator brings a number it already holds at a carrier into an account (docs/numbers.md#imported-numbers):
 * recorded as imported with that carrier, not bought (no slot, no charge, no renewal), and from then on a number
 * of the account like any other.
 */
export class NumberImports {
  constructor(
    private readonly d: Readonly<{
      exec: CommandExecutor;
      ids: IdsPort;
      numbers: NumberQueries;
      accounts: AccountQueries;
      agents: AgentQueries;
      carrierExists: (carrierId: string) => Promise<boolean>;
    }>,
  ) {}

  async import(ctx: RequestContext, i: NumberImport): Promise<PhoneNumberView> {
    if (!(await this.d.accounts.get(i.accountId))) throw new DomainError('NOT_FOUND', 'Account not found');
    if (!(await this.d.carrierExists(i.carrierId))) throw invalid('carrierId', `no carrier ${i.carrierId}: GET /admin/carriers lists them`);
    if (i.agentId && !(await this.d.agents.get(i.accountId, i.agentId))) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
    // a carrier gives a number to one holder at a time: one active number per E.164 (docs/numbers.md#release)
    if (await this.d.numbers.activeByPhoneNumber(i.phoneNumber))
      throw new DomainError('NUMBER_UNAVAILABLE', `${i.phoneNumber} is already an active number of this platform`);
    const numberId = this.d.ids.id('pn');
    const as: RequestContext = { ...ctx, accountId: i.accountId };
    await this.d.exec.execute(
      phoneNumberDecider,
      phoneNumberStream(numberId),
      {
        type: 'ImportNumber',
        data: { numberId, phoneNumber: i.phoneNumber, country: i.country, carrierId: i.carrierId, agentId: i.agentId },
      },
      as,
      { readYourWrites: true },
    );
    const view = await this.d.numbers.get(i.accountId, numberId);
    if (!view) throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
    return view;
  }
}

import { accountDecider, accountStream, type ChargeKind, chargeRefusal, numberSlotRefusal } from '../../domain/account/account.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';

export type Charge = Readonly<{ chargeId: string; amountMicros: number; kind: ChargeKind; description: string; reference?: string | null }>;

/**
 * Billing for the other capabilities: charges, number slots and pre-checks, always on the account that pays (a
 * sub-account's charges and slots are its parent's: one balance and one number limit per customer). Everything
 * here decides on the account stream itself and never waits for a read model: callers that answer from the
 * ledger wait for it themselves (docs/accounts.md, "Billing").
 */
export class Billing {
  constructor(private readonly exec: CommandExecutor) {}

  /** The account that pays for `accountId` (its parent for a sub-account), from the account's own stream. */
  async billingAccountOf(accountId: string): Promise<string> {
    return (await this.payer(accountId)).accountId;
  }

  /** The paying account's id, state and events: one stream read for a master account, two for a sub-account. */
  async payer(actingAccountId: string) {
    const own = await this.exec.load(accountDecider, accountStream(actingAccountId));
    if (own.state.status === 'none') throw new DomainError('ACCOUNT_NOT_FOUND', 'Account not found');
    const parentId = own.state.parentAccountId;
    if (!parentId) return { accountId: actingAccountId, ...own };
    return { accountId: parentId, ...(await this.exec.load(accountDecider, accountStream(parentId))) };
  }

  /**
   * Charge the paying account; idempotent by chargeId; 402 when the balance is short. A request that answers
   * right after charging asks for `readYourWrites`, so that the client's next read of its balance shows it.
   */
  async charge(ctx: RequestContext, actingAccountId: string, c: Charge, o: { readYourWrites?: boolean } = {}) {
    const accountId = await this.billingAccountOf(actingAccountId);
    return this.exec.execute(
      accountDecider,
      accountStream(accountId),
      {
        type: 'ChargeAccount',
        data: {
          accountId,
          chargeId: c.chargeId,
          amountMicros: c.amountMicros,
          kind: c.kind,
          description: c.description,
          reference: c.reference ?? null,
        },
      },
      ctx,
      { accountId, readYourWrites: o.readYourWrites ?? false },
    );
  }

  /** Refuses (402) when the paying account cannot cover `amountMicros` now; records nothing. */
  async assertCanPay(actingAccountId: string, amountMicros: number): Promise<void> {
    const { state } = await this.payer(actingAccountId);
    const refused = chargeRefusal(state, amountMicros);
    if (refused) throw refused;
  }

  /** Refuses (409 at the limit, then 402) when a number slot could not be held now; records nothing. */
  async assertCanHoldNumberSlot(actingAccountId: string, requiredBalanceMicros: number): Promise<void> {
    const { state } = await this.payer(actingAccountId);
    const refused = numberSlotRefusal(state, requiredBalanceMicros);
    if (refused) throw refused;
  }

  /** Hold a number slot (409 at the limit, then 402 when the balance is below `requiredBalanceMicros`). */
  async reserveNumberSlot(ctx: RequestContext, actingAccountId: string, numberId: string, requiredBalanceMicros: number) {
    const accountId = await this.billingAccountOf(actingAccountId);
    return this.exec.execute(
      accountDecider,
      accountStream(accountId),
      {
        type: 'ReserveNumberSlot',
        data: { accountId, numberId, requiredBalanceMicros },
      },
      ctx,
      { accountId },
    );
  }

  async releaseNumberSlot(ctx: RequestContext, actingAccountId: string, numberId: string, reason: string) {
    const accountId = await this.billingAccountOf(actingAccountId);
    return this.exec.execute(
      accountDecider,
      accountStream(accountId),
      {
        type: 'ReleaseNumberSlot',
        data: { accountId, numberId, reason },
      },
      ctx,
      { accountId },
    );
  }
}

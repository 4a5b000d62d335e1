import { accountDecider, DEFAULT_NUMBER_LIMIT, STARTING_CREDIT_MICROS, type AccountEvent, type ChargeKind } from '../../domain/account/account.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import { streams } from '../../domain/shared/streams.js';
import type { ApiKeySecretsPort } from '../ports/api-key-secrets.port.js';
import type { ClockPort } from '../ports/clock.port.js';
import type { EventStorePort } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { AccountQueries, AccountView } from '../ports/queries.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import { metadataOf, type RequestContext } from '../shared/context.js';
import { handleCommand, type HandleResult } from '../shared/handle-command.js';

export type OpenedAccount = Readonly<{ accountId: string; apiKey: string; keyId: string }>;

/** Account use cases: opening (with a first key), credit, keys. */
export class AccountCommands {
  constructor(
    private readonly store: EventStorePort,
    private readonly ids: IdsPort,
    private readonly clock: ClockPort,
    private readonly secrets: ApiKeySecretsPort,
    private readonly readModels: ReadModelsPort,
    private readonly accounts: AccountQueries,
  ) {}

  private async run(ctx: RequestContext, accountId: string, cmd: Parameters<typeof accountDecider.decide>[0]): Promise<HandleResult<AccountEvent, unknown>> {
    const r = await handleCommand({ store: this.store, ids: this.ids }, accountDecider, streams.account(accountId), cmd, metadataOf(ctx, accountId));
    if (r.checkpoint) await this.readModels.waitFor(r.checkpoint, r.events.map((e) => e.type));
    return r;
  }

  async open(ctx: RequestContext, o: { name: string; parentAccountId?: string | null; numberLimit?: number; startingCreditMicros?: number; keyName?: string }): Promise<OpenedAccount> {
    const accountId = this.ids.id('acc');
    const keyId = this.ids.id('key');
    const { key, prefix, hash } = this.secrets.generate();
    await this.run(ctx, accountId, {
      type: 'OpenAccount',
      data: {
        accountId, name: o.name, parentAccountId: o.parentAccountId ?? null,
        numberLimit: o.numberLimit ?? DEFAULT_NUMBER_LIMIT, startingCreditMicros: o.startingCreditMicros ?? STARTING_CREDIT_MICROS,
        initialKey: { keyId, name: o.keyName ?? 'default', prefix, keyHash: hash },
      },
      metadata: { now: this.clock.now().toISOString(), accountId },
    });
    return { accountId, apiKey: key, keyId };
  }

  /** For other capabilities: charge the account (idempotent by chargeId; 402 when the balance is short). */
  async charge(ctx: RequestContext, accountId: string, c: { chargeId: string; amountMicros: number; kind: ChargeKind; description: string; reference?: string | null }) {
    return this.run(ctx, accountId, {
      type: 'ChargeAccount', data: { accountId, chargeId: c.chargeId, amountMicros: c.amountMicros, kind: c.kind, description: c.description, reference: c.reference ?? null },
      metadata: this.meta(accountId),
    });
  }

  /** Hold a number slot (409 at the limit, then 402 when the balance is below `requiredBalanceMicros`). */
  async reserveNumberSlot(ctx: RequestContext, accountId: string, numberId: string, requiredBalanceMicros: number) {
    return this.run(ctx, accountId, { type: 'ReserveNumberSlot', data: { accountId, numberId, requiredBalanceMicros }, metadata: this.meta(accountId) });
  }

  async releaseNumberSlot(ctx: RequestContext, accountId: string, numberId: string, reason: string) {
    return this.run(ctx, accountId, { type: 'ReleaseNumberSlot', data: { accountId, numberId, reason }, metadata: this.meta(accountId) });
  }

  async setNumberLimit(ctx: RequestContext, accountId: string, numberLimit: number) {
    return this.run(ctx, accountId, { type: 'SetNumberLimit', data: { accountId, numberLimit }, metadata: this.meta(accountId) });
  }

  private meta(accountId: string) {
    return { now: this.clock.now().toISOString(), accountId };
  }

  async credit(ctx: RequestContext, accountId: string, amountMicros: number, reason: string): Promise<AccountView> {
    await this.run(ctx, accountId, { type: 'CreditAccount', data: { accountId, amountMicros, reason }, metadata: { now: this.clock.now().toISOString(), accountId } });
    const view = await this.accounts.get(accountId);
    if (!view) throw new DomainError('ACCOUNT_NOT_FOUND', 'Account not found');
    return view;
  }
}

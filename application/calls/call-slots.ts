import { callSlotsDecider, callSlotsStream } from '../../domain/call/call-slots.decider.js';
import type { RequestContext } from '../shared/context.js';
import { type CommandExecutor, type Step, step } from '../shared/execute.js';

export type SlotLimits = Readonly<{ perAccount: number; perNumber: number }>;

/** Where a call holds slots: its account's (and the parent's) outbound caps, and its number's cap. */
export type SlotScopes = Readonly<{ accounts: readonly string[]; numberId: string | null }>;

/**
 * Live-call caps (docs/calls.md#limits). Outbound calls hold a slot on their account's stream and on the parent
 * account's (a sub-account's calls count toward the parent's cap too; the parent may set a lower cap for a
 * sub-account); every call holds one on its number's stream. Reserving is all or nothing.
 */
export class CallSlots {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly limits: SlotLimits,
  ) {}

  /**
   * Takes the number's slot first, then the accounts' (docs/calls.md#limits): the narrowest cap first, so a call
   * that the number's cap refuses never holds an account slot meanwhile, and a refusal names the cap that is full
   * (30 calls at once from one number: 409 for the number's cap, never 429 because refused calls briefly filled
   * the account's). Together, so all or nothing: embedded in one append, elsewhere one after the other, the slots
   * taken given back when a later one is refused.
   */
  async reserve(ctx: RequestContext, callId: string, scopes: SlotScopes): Promise<void> {
    await this.exec.executeTogether(this.steps(ctx, callId, scopes), (_err, taken) => this.giveBack(ctx, callId, taken));
  }

  /**
   * The commands that take a call's slots, in the order `reserve` takes them, for a use case that writes them
   * together with its own command (`exec.executeTogether`, docs/event-store.md#commands-written-together).
   */
  steps(ctx: RequestContext, callId: string, scopes: SlotScopes): Step[] {
    const take = (stream: string, o: { limit: number; code: 'CALL_CONCURRENCY_LIMIT' | 'NUMBER_CALL_LIMIT'; message: string }) =>
      step(callSlotsDecider, stream, { type: 'ReserveCallSlot', data: { scope: stream, callId, ...o } }, ctx);
    return [
      ...(scopes.numberId
        ? [
            take(callSlotsStream('number', scopes.numberId), {
              limit: this.limits.perNumber,
              code: 'NUMBER_CALL_LIMIT',
              message: `This phone number is at its limit of ${this.limits.perNumber} concurrent calls`,
            }),
          ]
        : []),
      ...scopes.accounts.map((accountId) =>
        take(callSlotsStream('account', accountId), {
          limit: this.limits.perAccount,
          code: 'CALL_CONCURRENCY_LIMIT',
          message: `Too many concurrent calls: the limit of live outbound calls is reached. Try again when a call has ended.`,
        }),
      ),
    ];
  }

  /** Gives back the slots that these written commands took (those of `steps`; the others are passed over), last first. */
  async giveBack(ctx: RequestContext, callId: string, written: readonly Step[]): Promise<void> {
    for (const s of [...written].reverse()) if (s.input.type === 'ReserveCallSlot') await this.releaseOne(ctx, s.stream, callId);
  }

  async release(ctx: RequestContext, callId: string, scopes: SlotScopes): Promise<void> {
    for (const accountId of scopes.accounts) await this.releaseOne(ctx, callSlotsStream('account', accountId), callId);
    if (scopes.numberId) await this.releaseOne(ctx, callSlotsStream('number', scopes.numberId), callId);
  }

  /** A parent's own cap for one sub-account's live outbound calls (null: the default). */
  async setAccountLimit(ctx: RequestContext, accountId: string, limit: number | null): Promise<void> {
    const scope = callSlotsStream('account', accountId);
    await this.exec.execute(callSlotsDecider, scope, { type: 'SetCallSlotLimit', data: { scope, limit } }, ctx, {
      accountId,
    });
  }

  async accountLimit(accountId: string): Promise<{ limit: number; live: number; own: boolean }> {
    const { state } = await this.exec.state(callSlotsDecider, callSlotsStream('account', accountId));
    return { limit: state.limit ?? this.limits.perAccount, live: state.live.size, own: state.limit !== null };
  }

  private async releaseOne(ctx: RequestContext, stream: string, callId: string): Promise<void> {
    await this.exec.execute(callSlotsDecider, stream, { type: 'ReleaseCallSlot', data: { scope: stream, callId } }, ctx);
  }
}

import type { AccountCommands } from '../accounts/account-commands.js';
import { agentDecider, type AgentEvent } from '../../domain/agent/agent.decider.js';
import type { PhoneNumberCommand, PhoneNumberEvent, PhoneNumberState } from '../../domain/phone-number/phone-number.decider.js';
import { monthlyChargeId, NUMBER_MONTHLY_PRICE_MICROS, NUMBER_PROVISIONING_BALANCE_MICROS } from '../../domain/phone-number/pricing.js';
import { sipTrunkDecider, type SipTrunkCommand, type SipTrunkEvent } from '../../domain/sip-trunk/sip-trunk.decider.js';
import { DomainError, type ErrorCode } from '../../domain/shared/errors.js';
import { streams } from '../../domain/shared/streams.js';
import type { CarrierPort } from '../ports/carrier.port.js';
import type { ClockPort } from '../ports/clock.port.js';
import { compareCheckpoints, type EventMetadata, type EventStorePort, type RecordedEvent } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { NumberQueries } from '../ports/number-queries.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import type { RequestContext } from '../shared/context.js';
import { handleCommand, loadAggregate } from '../shared/handle-command.js';
import { carrierKey, NumberStream } from './number-stream.js';

/** Failures that end a provisioning step for good (anything else is retried by the reactor runner). */
const STEP_FAILURES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'NUMBER_LIMIT_REACHED', 'INSUFFICIENT_BALANCE', 'ACCOUNT_NOT_FOUND', 'NUMBER_UNAVAILABLE', 'VALIDATION_ERROR',
  'SMS_PROVIDER_ERROR', 'TELEPHONY_PROVIDER_ERROR',
]);
const isStepFailure = (err: unknown): err is DomainError => err instanceof DomainError && STEP_FAILURES.has(err.code);

/** Events after which a number's provisioning or release has a next step. */
const DRIVEN: ReadonlySet<string> = new Set([
  'NumberProvisioningRequested', 'NumberSlotHeld', 'NumberPurchased', 'NumberRoutingConfigured', 'NumberProvisioningAborted', 'NumberReleaseRequested',
]);

export const numberProcessEventTypes = [
  'NumberProvisioningRequested', 'NumberSlotHeld', 'NumberPurchased', 'NumberRoutingConfigured', 'NumberProvisioningAborted',
  'NumberReleaseRequested', 'NumberReleased', 'NumberAttached', 'NumberSipTrunkAssigned', 'SipTrunkDeleted', 'AgentDeleted',
] as const;

type Handled = RecordedEvent<PhoneNumberEvent | SipTrunkEvent | AgentEvent>;

/**
 * The phone-number process manager. It reacts to events (from its own checkpoint, see the reactor runner)
 * and is state-driven: for a number it loads the stream and performs the next step for the state it finds,
 * so a redelivered event, a crash between an effect and its record, or a restart simply resumes where the
 * stream says the process is. Every effect is idempotent: the carrier purchase by key, the slot by number
 * id, the charge by charge id, every append through the decider.
 *
 *   provisioning  Requested -> reserve slot -> SlotHeld -> search+purchase -> Purchased -> routing ->
 *                 RoutingConfigured -> charge first month -> Provisioned (+ Attached)
 *                 a step that cannot succeed -> Aborted -> release upstream (by key) + give the slot back -> Failed
 *   release       ReleaseRequested -> carrier release -> Released | ReleaseFailed
 *   trunk links   keep the trunks' link sets equal to the numbers' routes after a crash or a trunk deletion
 *   agents        AgentDeleted -> its numbers detached; Attached to an agent deleted meanwhile -> detached
 */
export class NumberProcess {
  private readonly numbers: NumberStream;
  /**
   * The newest NumberAttached this reactor has seen. Every attach recorded before an AgentDeleted reaches the
   * reactor before it (one subscription, global order), so once the numbers projector has passed this point
   * the read model names every number the deleted agent held.
   */
  private lastAttach: string | null = null;

  constructor(
    private readonly store: EventStorePort,
    private readonly ids: IdsPort,
    private readonly clock: ClockPort,
    private readonly carrier: CarrierPort,
    private readonly accounts: AccountCommands,
    private readonly readModels: ReadModelsPort,
    private readonly queries: NumberQueries,
    private readonly log: LoggerPort,
  ) {
    this.numbers = new NumberStream(store, ids);
  }

  readonly handles: readonly string[] = numberProcessEventTypes;

  /**
   * One batch: events of one account in order, accounts side by side (their slots and charges are on
   * different account streams; a parent and its sub-accounts share one, and handleCommand's retries absorb
   * that contention).
   */
  async handleBatch(batch: readonly RecordedEvent[]): Promise<void> {
    const byAccount = new Map<string, Handled[]>();
    for (const e of batch) {
      if (!this.handles.includes(e.type)) continue;
      const list = byAccount.get(e.metadata.accountId) ?? [];
      list.push(e as Handled);
      byAccount.set(e.metadata.accountId, list);
    }
    await Promise.all([...byAccount.values()].map(async (events) => {
      // one pass drives a number as far as it goes, so later events of the same number in the batch add nothing
      const driven = new Set<string>();
      for (const e of events) {
        if (DRIVEN.has(e.type)) {
          const numberId = (e.data as { numberId: string }).numberId;
          if (driven.has(numberId)) continue;
          driven.add(numberId);
        }
        await this.handle(e);
      }
    }));
  }

  async handle(e: Handled): Promise<void> {
    switch (e.type) {
      case 'NumberProvisioningRequested': case 'NumberSlotHeld': case 'NumberPurchased': case 'NumberRoutingConfigured':
      case 'NumberProvisioningAborted': case 'NumberReleaseRequested':
        return this.drive(e.data.numberId, e);
      case 'NumberAttached': {
        if (!this.lastAttach || compareCheckpoints(e.checkpoint, this.lastAttach) > 0) this.lastAttach = e.checkpoint;
        // an attach that raced the agent's deletion: the agent is gone, so is the link
        const agent = await loadAggregate(this.store, agentDecider, streams.agent(e.data.agentId));
        if (agent.state.status === 'deleted') await this.numbers.run(this.cmd(e, 'DetachFromAgent', { numberId: e.data.numberId, agentId: e.data.agentId, reason: 'agent_deleted' }), this.meta(e));
        return;
      }
      case 'NumberSipTrunkAssigned': {
        const { state } = await this.numbers.load(e.data.numberId);
        const current = state.status === 'active' ? state.sipTrunkId : null;
        if (e.data.previousSipTrunkId && e.data.previousSipTrunkId !== current) await this.trunk(e, e.data.previousSipTrunkId, 'UnlinkNumber', e.data.numberId);
        if (current && current === e.data.sipTrunkId) {
          try {
            await this.trunk(e, current, 'LinkNumber', e.data.numberId);
          } catch (err) {
            // the trunk went away (or lost its URIs) before the link was recorded: the route goes too
            if (!(err instanceof DomainError)) throw err;
            await this.numbers.run(this.cmd(e, 'ClearSipTrunk', { numberId: e.data.numberId, sipTrunkId: current }), this.meta(e));
          }
        }
        return;
      }
      case 'NumberReleased':
        if (e.data.previousSipTrunkId) await this.trunk(e, e.data.previousSipTrunkId, 'UnlinkNumber', e.data.numberId);
        return;
      case 'SipTrunkDeleted':
        for (const numberId of e.data.numberIds) await this.numbers.run(this.cmd(e, 'ClearSipTrunk', { numberId, sipTrunkId: e.data.trunkId }), this.meta(e));
        return;
      case 'AgentDeleted': {
        // the read model names the agent's numbers once it has projected every attach seen so far
        if (this.lastAttach) await this.readModels.waitFor(this.lastAttach, ['NumberAttached']);
        for (const numberId of await this.queries.attachedTo(e.data.accountId, e.data.agentId)) {
          await this.numbers.run(this.cmd(e, 'DetachFromAgent', { numberId, agentId: e.data.agentId, reason: 'agent_deleted' }), this.meta(e));
        }
        return;
      }
      default:
        return;
    }
  }

  /** Moves one number's provisioning or release as far as it can go now. */
  async drive(numberId: string, cause: Handled): Promise<void> {
    for (let guard = 0; guard < 12; guard++) {
      const { state } = await this.numbers.load(numberId);
      const next = await this.step(state, cause);
      if (!next) return;
    }
    this.log.warn({ numberId }, 'number process did not settle in one pass');
  }

  /** Performs the next step for `s` and records it; false when there is nothing to do. */
  private async step(s: PhoneNumberState, cause: Handled): Promise<boolean> {
    const meta = { ...this.meta(cause), accountId: s.status === 'none' ? cause.metadata.accountId : s.accountId };
    const ctx: RequestContext = { accountId: meta.accountId, requestId: meta.requestId, correlationId: meta.correlationId, actor: meta.actor };
    const at = (type: PhoneNumberCommand['type'], data: Record<string, unknown>) =>
      this.numbers.run({ type, data: { numberId: (s as { numberId: string }).numberId, ...data }, metadata: { now: this.now(), accountId: meta.accountId } } as never, meta);
    const abort = (err: DomainError) => at('AbortProvisioning', { code: err.code, message: err.message });

    if (s.status === 'provisioning') {
      try {
        switch (s.step) {
          case 'requested':
            await this.accounts.reserveNumberSlot(ctx, s.accountId, s.numberId, NUMBER_PROVISIONING_BALANCE_MICROS);
            await at('RecordSlotHeld', {});
            return true;
          case 'slot_held': {
            const bought = await this.purchase(s);
            await at('RecordPurchase', bought);
            return true;
          }
          case 'purchased':
            await this.carrier.configureRouting({ idempotencyKey: carrierKey(s), phoneNumber: s.phoneNumber! });
            await at('RecordRouting', {});
            return true;
          case 'routed': {
            const chargeId = monthlyChargeId(s.numberId, 0);
            await this.accounts.charge(ctx, s.accountId, {
              chargeId, amountMicros: NUMBER_MONTHLY_PRICE_MICROS, kind: 'number_monthly', description: `Phone number ${s.phoneNumber}: first month`, reference: s.numberId,
            });
            await at('CompleteProvisioning', { chargeId, amountMicros: NUMBER_MONTHLY_PRICE_MICROS });
            return true;
          }
        }
      } catch (err) {
        if (!isStepFailure(err)) throw err;
        this.log.info({ numberId: s.numberId, step: s.step, code: err.code }, 'number provisioning aborted');
        await abort(err);
        return true;
      }
    }
    if (s.status === 'aborting') {
      // undo in reverse: whatever the carrier sold under this attempt's key, then the account's slot
      if (s.reached !== 'requested') await this.carrier.release({ idempotencyKey: carrierKey(s) });
      await this.accounts.releaseNumberSlot(ctx, s.accountId, s.numberId, `provisioning failed: ${s.code}`);
      await at('CompleteAbort', {});
      return true;
    }
    if (s.status === 'active' && s.releasing) {
      try {
        await this.carrier.release({ idempotencyKey: carrierKey(s) });
      } catch (err) {
        if (!isStepFailure(err)) throw err;
        await at('FailRelease', { code: err.code, message: err.message });
        return true;
      }
      await at('CompleteRelease', {});
      return true;
    }
    return false;
  }

  /** Search and purchase, resuming a purchase whose answer was lost (the key still holds the number). */
  private async purchase(s: Extract<PhoneNumberState, { status: 'provisioning' }>) {
    const key = carrierKey(s);
    const held = await this.carrier.findPurchase(key);
    if (held) return held;
    const candidates = await this.carrier.searchAvailable({ country: s.country, areaCode: s.areaCode, limit: 5 });
    for (const c of candidates) {
      try {
        return await this.carrier.purchase({ phoneNumber: c.phoneNumber, idempotencyKey: key, accountId: s.accountId });
      } catch (err) {
        // bought by someone else between search and purchase: take the next one
        if (!(err instanceof DomainError && err.code === 'NUMBER_UNAVAILABLE')) throw err;
      }
    }
    throw new DomainError('NUMBER_UNAVAILABLE', s.areaCode
      ? `The requested number is unavailable: no numbers are available in area code ${s.areaCode} right now`
      : `The requested number is unavailable: no numbers are available in ${s.country} right now`);
  }

  private trunk(e: Handled, trunkId: string, type: 'LinkNumber' | 'UnlinkNumber', numberId: string) {
    const cmd: SipTrunkCommand = { type, data: { trunkId, numberId }, metadata: { now: this.now(), accountId: e.metadata.accountId } };
    return handleCommand({ store: this.store, ids: this.ids }, sipTrunkDecider, streams.sipTrunk(trunkId), cmd, this.meta(e));
  }

  private cmd(e: Handled, type: 'DetachFromAgent' | 'ClearSipTrunk', data: Record<string, unknown>) {
    return { type, data, metadata: { now: this.now(), accountId: e.metadata.accountId } } as never;
  }

  private now() {
    return this.clock.now().toISOString();
  }

  private meta(e: Handled): EventMetadata {
    return { accountId: e.metadata.accountId, correlationId: e.metadata.correlationId, causationId: e.id, requestId: e.metadata.requestId, actor: 'system:numbers' };
  }
}

import { type AgentEvent, agentDecider, agentStream } from '../../domain/agent/agent.decider.js';
import {
  importedCarrierOf,
  type PhoneNumberCommand,
  type PhoneNumberEvent,
  type PhoneNumberState,
  phoneNumberDecider,
  phoneNumberStream,
} from '../../domain/phone-number/phone-number.decider.js';
import { monthlyChargeId, NUMBER_MONTHLY_PRICE_MICROS, NUMBER_PROVISIONING_BALANCE_MICROS } from '../../domain/phone-number/pricing.js';
import { DomainError, type ErrorCode } from '../../domain/shared/errors.js';
import { type SipTrunkEvent, sipTrunkDecider, sipTrunkStream } from '../../domain/sip-trunk/sip-trunk.decider.js';
import type { Billing } from '../accounts/billing.js';
import { compareCheckpoints, type RecordedEvent } from '../ports/event-store.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import { ProcessManager } from '../shared/process-manager.js';
import type { CarrierPort } from './carrier.port.js';
import type { NumberQueries } from './number-queries.port.js';

/** Failures that end a provisioning step for good (anything else is retried by the reactor runner). */
const STEP_FAILURES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'NUMBER_LIMIT_REACHED',
  'INSUFFICIENT_BALANCE',
  'ACCOUNT_NOT_FOUND',
  'NUMBER_UNAVAILABLE',
  'VALIDATION_ERROR',
  'SMS_PROVIDER_ERROR',
  'TELEPHONY_PROVIDER_ERROR',
]);
const isStepFailure = (err: unknown): err is DomainError => err instanceof DomainError && STEP_FAILURES.has(err.code);

type Handled = Extract<
  PhoneNumberEvent | SipTrunkEvent | AgentEvent,
  {
    type:
      | 'NumberProvisioningRequested'
      | 'NumberReleaseRequested'
      | 'NumberReleased'
      | 'NumberAttached'
      | 'NumberSipTrunkAssigned'
      | 'SipTrunkDeleted'
      | 'AgentDeleted';
  }
>;

/**
 * The phone-number process manager. A provisioning or release request starts it; it then drives the number
 * to the end in one go, state-driven: it loads the number's stream and performs the next step for the state
 * it finds, so a redelivered request, a crash between an effect and its record, or a restart simply resumes
 * where the stream says the process is. It never reacts to the step facts it records itself. Every effect is idempotent: the carrier purchase by key, the slot by number
 * id, the charge by charge id, every append through the decider.
 *
 *   provisioning  Requested -> reserve slot -> SlotHeld -> search+purchase -> Purchased -> routing ->
 *                 RoutingConfigured -> charge first month -> Provisioned (+ Attached)
 *                 a step that cannot succeed -> Aborted -> release upstream (by key) + give the slot back -> Failed
 *   release       ReleaseRequested -> carrier release -> Released | ReleaseFailed
 *   trunk links   keep the trunks' link sets equal to the numbers' routes after a crash or a trunk deletion
 *   agents        AgentDeleted -> its numbers detached; Attached to an agent deleted meanwhile -> detached
 */
export class NumberProcess extends ProcessManager<Handled> {
  readonly name = 'number_process';
  /** the actor its facts have always been recorded as */
  override get actor(): string {
    return 'system:numbers';
  }
  readonly handles = [
    'NumberProvisioningRequested',
    'NumberReleaseRequested',
    'NumberReleased',
    'NumberAttached',
    'NumberSipTrunkAssigned',
    'SipTrunkDeleted',
    'AgentDeleted',
  ] as const;
  /**
   * The newest NumberAttached this reactor has seen. Every attach recorded before an AgentDeleted reaches the
   * reactor before it (one subscription, global order), so once the numbers projector has passed this point
   * the read model names every number the deleted agent held.
   */
  private lastAttach: string | null = null;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly carrier: CarrierPort,
    private readonly billing: Billing,
    private readonly readModels: ReadModelsPort,
    private readonly queries: NumberQueries,
    private readonly log: LoggerPort,
  ) {
    super();
  }

  /**
   * Events of one account in log order, accounts side by side: their slots and charges are on different account
   * streams (a parent and its sub-accounts share one, and the executor's retries absorb that contention).
   */
  protected instanceOf(e: RecordedEvent<Handled>): string {
    return e.metadata.accountId;
  }

  protected async react(e: RecordedEvent<Handled>, ctx: RequestContext): Promise<void> {
    switch (e.type) {
      case 'NumberProvisioningRequested':
      case 'NumberReleaseRequested':
        return this.drive(e.data.numberId, ctx);
      case 'NumberAttached': {
        if (!this.lastAttach || compareCheckpoints(e.checkpoint, this.lastAttach) > 0) this.lastAttach = e.checkpoint;
        // an attach that raced the agent's deletion: the agent is gone, so is the link
        const agent = await this.exec.load(agentDecider, agentStream(e.data.agentId));
        if (agent.state.status === 'deleted')
          await this.number(ctx, {
            type: 'DetachFromAgent',
            data: { numberId: e.data.numberId, agentId: e.data.agentId, reason: 'agent_deleted' },
          });
        return;
      }
      case 'NumberSipTrunkAssigned': {
        const { state } = await this.load(e.data.numberId);
        const current = state.status === 'active' ? state.sipTrunkId : null;
        if (e.data.previousSipTrunkId && e.data.previousSipTrunkId !== current)
          await this.trunk(ctx, e.data.previousSipTrunkId, 'UnlinkNumber', e.data.numberId);
        if (current && current === e.data.sipTrunkId) {
          try {
            await this.trunk(ctx, current, 'LinkNumber', e.data.numberId);
          } catch (err) {
            // the trunk went away (or lost its URIs) before the link was recorded: the route goes too
            if (!(err instanceof DomainError)) throw err;
            await this.number(ctx, { type: 'ClearSipTrunk', data: { numberId: e.data.numberId, sipTrunkId: current } });
          }
        }
        return;
      }
      case 'NumberReleased':
        if (e.data.previousSipTrunkId) await this.trunk(ctx, e.data.previousSipTrunkId, 'UnlinkNumber', e.data.numberId);
        return;
      case 'SipTrunkDeleted':
        for (const numberId of e.data.numberIds)
          await this.number(ctx, { type: 'ClearSipTrunk', data: { numberId, sipTrunkId: e.data.trunkId } });
        return;
      case 'AgentDeleted': {
        // the read model names the agent's numbers once it has projected every attach seen so far
        if (this.lastAttach) await this.readModels.waitFor(this.lastAttach, ['NumberAttached']);
        for (const numberId of await this.queries.attachedTo(e.data.accountId, e.data.agentId)) {
          await this.number(ctx, { type: 'DetachFromAgent', data: { numberId, agentId: e.data.agentId, reason: 'agent_deleted' } });
        }
        return;
      }
      default:
        return;
    }
  }

  /** Moves one number's provisioning or release as far as it can go now. */
  async drive(numberId: string, ctx: RequestContext): Promise<void> {
    for (let guard = 0; guard < 12; guard++) {
      const { state } = await this.load(numberId);
      const next = await this.step(state, ctx);
      if (!next) return;
    }
    this.log.warn({ numberId }, 'number process did not settle in one pass');
  }

  /** Performs the next step for `s` and records it; false when there is nothing to do. */
  private async step(s: PhoneNumberState, cause: RequestContext): Promise<boolean> {
    const ctx: RequestContext = { ...cause, accountId: s.status === 'none' ? cause.accountId : s.accountId };
    const at = (type: PhoneNumberCommand['type'], data: Record<string, unknown>) =>
      this.number(ctx, { type, data: { numberId: (s as { numberId: string }).numberId, ...data } } as CommandInput<PhoneNumberCommand>);
    const abort = (err: DomainError) => at('AbortProvisioning', { code: err.code, message: err.message });

    if (s.status === 'provisioning') {
      try {
        switch (s.step) {
          case 'requested':
            await this.billing.reserveNumberSlot(ctx, s.accountId, s.numberId, NUMBER_PROVISIONING_BALANCE_MICROS);
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
            await this.billing.charge(ctx, s.accountId, {
              chargeId,
              amountMicros: NUMBER_MONTHLY_PRICE_MICROS,
              kind: 'number_monthly',
              description: `Phone number ${s.phoneNumber}: first month`,
              reference: s.numberId,
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
      if (s.reached !== 'requested') {
        try {
          await this.carrier.release({ idempotencyKey: carrierKey(s) });
        } catch (err) {
          // a carrier that refuses (its credentials, say) would refuse every retry and hold the process for good; no
          // answer is tried again. What the key may still hold is for the operator to release (docs/numbers.md#provisioning)
          if (!isStepFailure(err)) throw err;
          this.log.error(
            { numberId: s.numberId, carrierKey: carrierKey(s), code: err.code, err: err.message },
            'number provisioning aborted, and the carrier refused to release what the key holds: check the carrier for it',
          );
        }
      }
      await this.billing.releaseNumberSlot(ctx, s.accountId, s.numberId, `provisioning failed: ${s.code}`);
      await at('CompleteAbort', {});
      return true;
    }
    if (s.status === 'active' && s.releasing) {
      try {
        // an imported number stays the operator's at its carrier: nothing to release upstream
        if (importedCarrierOf(s.carrierRef) === null) await this.carrier.release({ idempotencyKey: carrierKey(s) });
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
    throw new DomainError(
      'NUMBER_UNAVAILABLE',
      s.areaCode
        ? `The requested number is unavailable: no numbers are available in area code ${s.areaCode} right now`
        : `The requested number is unavailable: no numbers are available in ${s.country} right now`,
    );
  }

  private load(numberId: string) {
    return this.exec.load(phoneNumberDecider, phoneNumberStream(numberId));
  }

  private number(ctx: RequestContext, cmd: CommandInput<PhoneNumberCommand>) {
    return this.exec.execute(phoneNumberDecider, phoneNumberStream(cmd.data.numberId), cmd, ctx);
  }

  private trunk(ctx: RequestContext, trunkId: string, type: 'LinkNumber' | 'UnlinkNumber', numberId: string) {
    return this.exec.execute(sipTrunkDecider, sipTrunkStream(trunkId), { type, data: { trunkId, numberId } }, ctx);
  }
}

/** The carrier idempotency key of a provisioning attempt: a retried attempt never buys a second number. */
export const carrierKey = (s: { numberId: string; attempt: number }) => `${s.numberId}:${s.attempt}`;

import { agentDecider, agentStream } from '../../domain/agent/agent.decider.js';
import { areaCodeProblem, type NanpCountry } from '../../domain/phone-number/north-american-area-codes.js';
import {
  type PhoneNumberCommand,
  type PhoneNumberEvent,
  type PhoneNumberState,
  phoneNumberDecider,
  phoneNumberStream,
} from '../../domain/phone-number/phone-number.decider.js';
import { NUMBER_PROVISIONING_BALANCE_MICROS } from '../../domain/phone-number/pricing.js';
import { DomainError } from '../../domain/shared/errors.js';
import { sipTrunkDecider, sipTrunkStream } from '../../domain/sip-trunk/sip-trunk.decider.js';
import type { Billing } from '../accounts/billing.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import { awaitOutcome } from '../shared/await-outcome.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import type { NumberProvisioningPort } from '../signup/number-provisioning.port.js';
import type { NumberQueries, PhoneNumberView } from './number-queries.port.js';

export type ProvisionInput = Readonly<{ numberId?: string; country: NanpCountry; areaCode: string | null; agentId: string | null }>;

const notFound = () => new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');

/**
 * Phone-number use cases. Provisioning and release leave the process (carrier, ledger), so they are driven
 * by the number process manager (NumberProcess): this service records the request, waits for the outcome
 * fact on the number's stream, and answers from the read model. Attach, detach and trunk routing are
 * local decisions taken here.
 */
export class NumberCommands implements NumberProvisioningPort {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly readModels: ReadModelsPort,
    private readonly queries: NumberQueries,
    private readonly billing: Billing,
    private readonly o: { provisioningTimeoutMs: number },
  ) {}

  private run(ctx: RequestContext, cmd: CommandInput<PhoneNumberCommand>, readYourWrites = false) {
    return this.exec.execute(phoneNumberDecider, phoneNumberStream(cmd.data.numberId), cmd, ctx, { readYourWrites });
  }

  private load(numberId: string) {
    return this.exec.load(phoneNumberDecider, phoneNumberStream(numberId));
  }

  private until(numberId: string, done: (s: PhoneNumberState, events: readonly RecordedEvent<PhoneNumberEvent>[]) => boolean) {
    return awaitOutcome(this.exec, phoneNumberDecider, phoneNumberStream(numberId), done, this.o.provisioningTimeoutMs);
  }

  /**
   * Read-your-writes after the process manager's outcome: the number's rows, and the paying account's rows
   * (ledger, slots) as the process left them for this number.
   */
  private async settle(ctx: RequestContext, numberId: string, events: readonly RecordedEvent[]): Promise<void> {
    await this.exec.settle(events);
    const { events: ledger } = await this.billing.payer(ctx.accountId);
    const last = ledger.findLast((e) =>
      'numberId' in e.data ? e.data.numberId === numberId : 'reference' in e.data && e.data.reference === numberId,
    );
    if (last) await this.exec.settle([last]);
  }

  private async view(ctx: RequestContext, numberId: string): Promise<PhoneNumberView> {
    const v = await this.queries.get(ctx.accountId, numberId);
    if (!v) throw notFound();
    return v;
  }

  private async requireAgent(ctx: RequestContext, agentId: string): Promise<void> {
    const { state } = await this.exec.state(agentDecider, agentStream(agentId));
    if (state.status !== 'active' || state.accountId !== ctx.accountId) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
  }

  /**
   * POST /v1/numbers. Checks what can be checked without side effects first (area code, agent, and the
   * account's own limit-then-balance decision, run on its current state), then records the request and waits
   * for the process manager to provision it or to fail it. The authoritative limit and balance checks are the
   * account aggregate's, taken again by the process manager when it reserves the slot.
   */
  async provisionNumber(ctx: RequestContext, input: ProvisionInput): Promise<PhoneNumberView> {
    const problem = input.areaCode === null ? null : areaCodeProblem(input.country, input.areaCode);
    if (problem)
      throw new DomainError('VALIDATION_ERROR', `areaCode ${problem}`, [{ field: 'areaCode', message: problem, type: 'value_error' }]);
    if (input.agentId) await this.requireAgent(ctx, input.agentId);
    const numberId = input.numberId ?? this.ids.id('pn');

    const existing = (await this.load(numberId)).state;
    if (existing.status === 'none' || existing.status === 'failed')
      await this.billing.assertCanHoldNumberSlot(ctx.accountId, NUMBER_PROVISIONING_BALANCE_MICROS);

    const r = await this.run(ctx, {
      type: 'RequestNumber',
      data: { numberId, country: input.country, areaCode: input.areaCode, agentId: input.agentId },
    });
    const attempt = r.state.status === 'none' ? 1 : r.state.attempt;
    const outcome = await this.until(numberId, (s) => s.status !== 'none' && s.attempt === attempt && isSettled(s));
    const s = outcome.state;
    if (s.status === 'failed' || s.status === 'aborting') {
      await this.settle(ctx, numberId, outcome.events);
      throw new DomainError(s.code, s.message);
    }
    if (s.status !== 'active' && s.status !== 'released') {
      throw new DomainError(
        'NUMBER_PROVISIONING_PENDING',
        `Provisioning of number ${numberId} is taking longer than usual; it continues in the background and the number will appear in GET /v1/numbers when it is ready`,
      );
    }
    await this.settle(ctx, numberId, outcome.events);
    return this.view(ctx, numberId);
  }

  /** The sign-up flow's port: one number, idempotent by `numberId`, first month charged. */
  async provision(ctx: RequestContext, o: { numberId: string; agentId: string | null; country: 'US' | 'CA'; areaCode: string | null }) {
    const v = await this.provisionNumber(ctx, o);
    return { numberId: v.id, phoneNumber: v.phoneNumber };
  }

  /** DELETE /v1/numbers/{id}: released upstream, then `released` for good (history kept, agent detached). */
  async release(ctx: RequestContext, numberId: string): Promise<{ success: true; phoneNumber: string; status: 'released' }> {
    const r = await this.run(ctx, { type: 'RequestRelease', data: { numberId } });
    const from = r.revision === 'no_stream' ? -1n : r.revision;
    const outcome = await this.until(
      numberId,
      (s, events) => s.status === 'released' || events.some((e) => e.streamRevision >= from && e.type === 'NumberReleaseFailed'),
    );
    const s = outcome.state;
    if (s.status !== 'released') {
      const failed = outcome.events.findLast((e) => e.type === 'NumberReleaseFailed' && e.streamRevision >= from);
      if (failed?.type === 'NumberReleaseFailed') throw new DomainError(failed.data.code, failed.data.message);
      throw new DomainError(
        'NUMBER_PROVISIONING_PENDING',
        `The release of number ${numberId} is taking longer than usual; it continues in the background`,
      );
    }
    await this.settle(ctx, numberId, outcome.events);
    return { success: true, phoneNumber: s.phoneNumber, status: 'released' };
  }

  /**
   * POST /v1/agents/{agent_id}/numbers. A number held by another agent moves to this one (the event names
   * the agent it came from); attaching it to the agent that holds it again changes nothing.
   */
  async attach(ctx: RequestContext, agentId: string, numberId: string) {
    await this.requireAgent(ctx, agentId);
    await this.run(ctx, { type: 'AttachToAgent', data: { numberId, agentId } }, true);
    const v = await this.view(ctx, numberId);
    return { agentId, number: { id: v.id, phoneNumber: v.phoneNumber, status: v.status, type: v.type } };
  }

  /** DELETE /v1/agents/{agent_id}/numbers/{number_id}: the number stays active, with no agent. */
  async detach(ctx: RequestContext, agentId: string, numberId: string): Promise<{ success: true }> {
    await this.requireAgent(ctx, agentId);
    await this.run(ctx, { type: 'DetachFromAgent', data: { numberId, agentId, reason: 'request' } }, true);
    return { success: true };
  }

  private trunk(ctx: RequestContext, trunkId: string, type: 'LinkNumber' | 'UnlinkNumber', numberId: string) {
    return this.exec.execute(sipTrunkDecider, sipTrunkStream(trunkId), { type, data: { trunkId, numberId } }, ctx);
  }

  /**
   * PATCH /v1/numbers/{id} {sipTrunkId}. The trunk records the link first (it owns "no clearing the URIs while
   * numbers are attached" and refuses a trunk without URIs), then the number records its route, then the
   * previous trunk lets go. A failure in the middle is undone here; the process manager repairs what a crash
   * leaves behind from the number's NumberSipTrunkAssigned.
   */
  async assignSipTrunk(ctx: RequestContext, numberId: string, sipTrunkId: string | null): Promise<PhoneNumberView> {
    const { state } = await this.load(numberId);
    usable(state, ctx.accountId);
    if (state.status === 'active' && state.sipTrunkId === sipTrunkId) return this.view(ctx, numberId);
    const written: { checkpoint: string; types: string[] }[] = [];
    if (sipTrunkId) {
      const linked = await this.trunk(ctx, sipTrunkId, 'LinkNumber', numberId);
      if (linked.checkpoint) written.push({ checkpoint: linked.checkpoint, types: linked.events.map((e) => e.type) });
    }
    let assigned: Awaited<ReturnType<NumberCommands['run']>>;
    try {
      assigned = await this.run(ctx, { type: 'AssignSipTrunk', data: { numberId, sipTrunkId } });
    } catch (err) {
      if (sipTrunkId) await this.trunk(ctx, sipTrunkId, 'UnlinkNumber', numberId);
      throw err;
    }
    if (assigned.checkpoint) written.push({ checkpoint: assigned.checkpoint, types: assigned.events.map((e) => e.type) });
    const event = assigned.events[0];
    const previous = event?.type === 'NumberSipTrunkAssigned' ? event.data.previousSipTrunkId : null;
    if (previous && previous !== sipTrunkId) {
      const unlinked = await this.trunk(ctx, previous, 'UnlinkNumber', numberId);
      if (unlinked.checkpoint) written.push({ checkpoint: unlinked.checkpoint, types: unlinked.events.map((e) => e.type) });
    }
    if (!sipTrunkId) {
      // repair: a trunk left believing it holds this number (a crash between link and assign) lets go too
      for (const stale of await this.queries.trunksLinkedTo(ctx.accountId, numberId))
        await this.trunk(ctx, stale, 'UnlinkNumber', numberId);
    }
    for (const w of written) await this.readModels.waitFor(w.checkpoint, w.types);
    return this.view(ctx, numberId);
  }
}

/** Settled: provisioning has an answer (active, or failed with its effects undone). */
const isSettled = (s: PhoneNumberState) => s.status === 'active' || s.status === 'failed' || s.status === 'released';

function usable(s: PhoneNumberState, accountId: string): void {
  if (s.status === 'none' || s.accountId !== accountId) throw notFound();
  if (s.status === 'released')
    throw new DomainError('PHONE_NUMBER_RELEASED', 'The phone number was released; released numbers cannot be changed');
  if (s.status !== 'active') throw notFound();
}

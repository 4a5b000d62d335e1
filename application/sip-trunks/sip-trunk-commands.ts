import { DomainError } from '../../domain/shared/errors.js';
import {
  type SipTrunkChangesInput,
  type SipTrunkCommand,
  type SipTrunkConfigInput,
  type SipTrunkEvent,
  sipTrunkDecider,
  sipTrunkStream,
  type TerminationChange,
} from '../../domain/sip-trunk/sip-trunk.decider.js';
import type { CredentialSealerPort } from '../carriers/carriers.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import { awaitOutcome } from '../shared/await-outcome.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import type { SipTrunkQueries, SipTrunkView } from './sip-trunk-queries.port.js';

/** The termination side as the client gives it: passwords plain, sealed before anything records them. */
export type TerminationInput = Readonly<{
  credentials?: readonly Readonly<{ username: string; password?: string }>[];
  addresses?: readonly string[];
}>;
export type SipTrunkInput = Omit<SipTrunkConfigInput, 'termination'> & { termination?: TerminationInput };
export type SipTrunkChangesIn = Omit<SipTrunkChangesInput, 'termination'> & { termination?: TerminationInput };

/**
 * SIP trunk use cases (docs/numbers.md, "SIP trunks"). Each write records its fact and awaits what the SIP trunk
 * process (SipTrunkProcess) got from the provider: the trunk is created, updated or deleted upstream by that
 * process, never inside the request. A refusal by the provider answers with its error (502) and leaves the
 * record as the provider has it: no trunk, the old configuration, or the trunk still there.
 */
export class SipTrunkCommands {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly queries: SipTrunkQueries,
    private readonly sealer: CredentialSealerPort,
    private readonly o: { providerTimeoutMs: number },
  ) {}

  /** the passwords given, sealed (docs/sip.md#calls-from-your-pbx); one left out stays left out */
  private sealed<T extends { termination?: TerminationInput }>(c: T): Omit<T, 'termination'> & { termination?: TerminationChange } {
    const { termination, ...rest } = c;
    if (!termination) return rest;
    const credentials = termination.credentials?.map((x) => ({
      username: x.username,
      ...(x.password ? { passwordSealed: this.sealer.seal(x.password) } : {}),
    }));
    return {
      ...rest,
      termination: { ...(credentials ? { credentials } : {}), ...(termination.addresses ? { addresses: termination.addresses } : {}) },
    };
  }

  private run(ctx: RequestContext, cmd: CommandInput<SipTrunkCommand>) {
    return this.exec.execute(sipTrunkDecider, sipTrunkStream(cmd.data.trunkId), cmd, ctx);
  }

  /** Awaits the first of `outcomes` recorded after `revision`; throws the provider's refusal, or 503 while it has not answered. */
  private async outcome(
    trunkId: string,
    revision: bigint | 'no_stream',
    outcomes: readonly SipTrunkEvent['type'][],
    refusals: readonly SipTrunkEvent['type'][],
  ) {
    const after = revision === 'no_stream' ? -1n : revision;
    const done = await awaitOutcome(
      this.exec,
      sipTrunkDecider,
      sipTrunkStream(trunkId),
      (_s, events) => events.some((e) => e.streamRevision > after && outcomes.includes(e.type)),
      this.o.providerTimeoutMs,
    );
    const answer = done.events.find((e) => e.streamRevision > after && outcomes.includes(e.type));
    if (!answer)
      throw new DomainError(
        'READ_MODEL_TIMEOUT',
        `The SIP provider has not answered yet for trunk ${trunkId}; the change goes on in the background`,
      );
    await this.exec.settle(done.events.filter((e) => e.streamRevision <= answer.streamRevision));
    if (refusals.includes(answer.type) && 'code' in answer.data) throw new DomainError(answer.data.code, answer.data.message);
  }

  private async view(ctx: RequestContext, trunkId: string): Promise<SipTrunkView> {
    const v = await this.queries.get(ctx.accountId, trunkId);
    if (!v) throw new DomainError('SIP_TRUNK_NOT_FOUND', 'SIP trunk not found');
    return v;
  }

  private async owned(ctx: RequestContext, trunkId: string) {
    const { state } = await this.exec.state(sipTrunkDecider, sipTrunkStream(trunkId));
    if (state.status !== 'active' || state.accountId !== ctx.accountId) throw new DomainError('SIP_TRUNK_NOT_FOUND', 'SIP trunk not found');
    return state;
  }

  async create(ctx: RequestContext, input: SipTrunkInput): Promise<SipTrunkView> {
    const trunkId = this.ids.id('trk');
    const r = await this.run(ctx, { type: 'RequestSipTrunk', data: { trunkId, config: this.sealed(input) } });
    await this.outcome(trunkId, r.revision, ['SipTrunkCreated', 'SipTrunkFailed'], ['SipTrunkFailed']);
    return this.view(ctx, trunkId);
  }

  async update(ctx: RequestContext, trunkId: string, input: SipTrunkChangesIn): Promise<SipTrunkView> {
    await this.owned(ctx, trunkId);
    const r = await this.run(ctx, { type: 'UpdateSipTrunk', data: { trunkId, changes: this.sealed(input) } });
    if (r.events.length > 0)
      await this.outcome(trunkId, r.revision, ['SipTrunkSynced', 'SipTrunkUpdateReverted', 'SipTrunkDeleted'], ['SipTrunkUpdateReverted']);
    return this.view(ctx, trunkId);
  }

  async delete(ctx: RequestContext, trunkId: string): Promise<{ success: true; id: string }> {
    await this.owned(ctx, trunkId);
    const r = await this.run(ctx, { type: 'RequestSipTrunkDeletion', data: { trunkId } });
    await this.outcome(trunkId, r.revision, ['SipTrunkDeleted', 'SipTrunkDeletionFailed'], ['SipTrunkDeletionFailed']);
    return { success: true, id: trunkId };
  }
}

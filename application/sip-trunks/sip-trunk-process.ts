import { DomainError } from '../../domain/shared/errors.js';
import {
  type SipTrunkChanges,
  type SipTrunkCommand,
  type SipTrunkEvent,
  sipTrunkDecider,
  sipTrunkStream,
  terminationOf,
} from '../../domain/sip-trunk/sip-trunk.decider.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import { ProcessManager } from '../shared/process-manager.js';
import type { SipTrunkProviderPort } from './sip-trunk-provider.port.js';

type Handled = Extract<SipTrunkEvent, { type: 'SipTrunkRequested' | 'SipTrunkUpdated' | 'SipTrunkDeletionRequested' }>;

/** A provider's answer that ends a step for good (anything else is retried by the reactor runner). */
const isRefusal = (err: unknown): err is DomainError => err instanceof DomainError;

/**
 * The SIP trunk process (docs/numbers.md, "SIP trunks"): keeps the provider's trunk equal to the recorded one.
 *
 *   create  SipTrunkRequested -> provider createTrunk (idempotent by the trunk id) -> SipTrunkCreated | SipTrunkFailed
 *   update  SipTrunkUpdated -> provider updateTrunk with the whole configuration -> SipTrunkSynced
 *           | SipTrunkUpdateReverted (the fields that update changed go back; the provider still runs the old ones)
 *   delete  SipTrunkDeletionRequested -> provider deleteTrunk (idempotent) -> SipTrunkDeleted | SipTrunkDeletionFailed
 *
 * The requests record the first fact and await the outcome; a redelivered event finds its outcome already recorded
 * and does nothing.
 */
export class SipTrunkProcess extends ProcessManager<Handled> {
  readonly name = 'sip_trunk_process';
  readonly handles = ['SipTrunkRequested', 'SipTrunkUpdated', 'SipTrunkDeletionRequested'] as const;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly provider: SipTrunkProviderPort,
  ) {
    super();
  }

  protected instanceOf(e: RecordedEvent<Handled>): string {
    return e.data.trunkId;
  }

  private record(ctx: RequestContext, cmd: CommandInput<SipTrunkCommand>) {
    return this.exec.execute(sipTrunkDecider, sipTrunkStream(cmd.data.trunkId), cmd, ctx);
  }

  protected async react(e: RecordedEvent<Handled>, ctx: RequestContext): Promise<void> {
    const trunkId = e.data.trunkId;
    const { state, events } = await this.exec.load(sipTrunkDecider, sipTrunkStream(trunkId));
    switch (e.type) {
      case 'SipTrunkRequested': {
        if (state.status !== 'requested') return;
        try {
          const upstream = await this.provider.createTrunk({ trunkId, accountId: state.accountId, config: state.config });
          await this.record(ctx, {
            type: 'CreateSipTrunk',
            data: { trunkId, config: state.config, providerRef: upstream.providerRef, terminationUri: upstream.terminationUri },
          });
        } catch (err) {
          if (!isRefusal(err)) throw err;
          await this.record(ctx, { type: 'FailSipTrunk', data: { trunkId, code: err.code, message: err.message } });
        }
        return;
      }
      case 'SipTrunkUpdated': {
        // the updates not yet answered (racing requests): one push answers them all
        const lastAnswer = events.findLastIndex((x) => x.type === 'SipTrunkSynced' || x.type === 'SipTrunkUpdateReverted');
        const pending = events.map((x, i) => ({ x, i })).filter(({ x, i }) => i > lastAnswer && x.type === 'SipTrunkUpdated');
        if (!pending.some(({ x }) => x.id === e.id) || state.status !== 'active') return;
        try {
          await this.provider.updateTrunk({ providerRef: state.providerRef, config: state.config });
          await this.record(ctx, { type: 'RecordSipTrunkSynced', data: { trunkId } });
        } catch (err) {
          if (!isRefusal(err)) throw err;
          const before = events.slice(0, pending[0]!.i).reduce(sipTrunkDecider.evolve, sipTrunkDecider.initialState());
          // a trunk recorded without a termination side had none: a revert gives it none again
          const previous: Record<string, unknown> =
            before.status === 'active' ? { ...before.config, termination: terminationOf(before.config) } : {};
          const keys = new Set(pending.flatMap(({ x }) => (x.type === 'SipTrunkUpdated' ? Object.keys(x.data.changes) : [])));
          const changes = Object.fromEntries([...keys].map((k) => [k, previous[k]])) as SipTrunkChanges;
          await this.record(ctx, { type: 'RevertSipTrunkUpdate', data: { trunkId, changes, code: err.code, message: err.message } });
        }
        return;
      }
      case 'SipTrunkDeletionRequested': {
        if (state.status !== 'active' || !state.deleting) return;
        try {
          await this.provider.deleteTrunk({ providerRef: state.providerRef });
          await this.record(ctx, { type: 'DeleteSipTrunk', data: { trunkId } });
        } catch (err) {
          if (!isRefusal(err)) throw err;
          await this.record(ctx, { type: 'FailSipTrunkDeletion', data: { trunkId, code: err.code, message: err.message } });
        }
        return;
      }
    }
  }
}

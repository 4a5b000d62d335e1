import { sipTrunkDecider, type SipTrunkChanges, type SipTrunkCommand, type SipTrunkConfig } from '../../domain/sip-trunk/sip-trunk.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import { streams } from '../../domain/shared/streams.js';
import type { ClockPort } from '../ports/clock.port.js';
import type { EventStorePort } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { SipTrunkQueries, SipTrunkView } from '../ports/number-queries.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import type { SipTrunkProviderPort } from '../ports/sip-trunk-provider.port.js';
import { metadataOf, type RequestContext } from '../shared/context.js';
import { handleCommand, loadAggregate } from '../shared/handle-command.js';

/**
 * SIP trunk use cases (spec 4.7). The upstream trunk is created before the local record (idempotent by the
 * trunk id) and deleted before the soft delete (idempotent), so a failure leaves nothing half-done locally.
 * Updates are decided locally first (the trunk aggregate owns the "URIs in use" rule) and then pushed
 * upstream as the full configuration; an upstream failure is answered 502 after the local change is undone.
 */
export class SipTrunkCommands {
  constructor(
    private readonly store: EventStorePort,
    private readonly ids: IdsPort,
    private readonly clock: ClockPort,
    private readonly readModels: ReadModelsPort,
    private readonly provider: SipTrunkProviderPort,
    private readonly queries: SipTrunkQueries,
  ) {}

  private async run(ctx: RequestContext, trunkId: string, type: SipTrunkCommand['type'], data: Omit<SipTrunkCommand['data'], 'trunkId'>) {
    const cmd = { type, data: { trunkId, ...data }, metadata: { now: this.clock.now().toISOString(), accountId: ctx.accountId } } as SipTrunkCommand;
    const r = await handleCommand({ store: this.store, ids: this.ids }, sipTrunkDecider, streams.sipTrunk(trunkId), cmd, metadataOf(ctx));
    if (r.checkpoint) await this.readModels.waitFor(r.checkpoint, r.events.map((e) => e.type));
    return r;
  }

  private async view(ctx: RequestContext, trunkId: string): Promise<SipTrunkView> {
    const v = await this.queries.get(ctx.accountId, trunkId);
    if (!v) throw new DomainError('SIP_TRUNK_NOT_FOUND', 'SIP trunk not found');
    return v;
  }

  private async owned(ctx: RequestContext, trunkId: string) {
    const { state } = await loadAggregate(this.store, sipTrunkDecider, streams.sipTrunk(trunkId));
    if (state.status !== 'active' || state.accountId !== ctx.accountId) throw new DomainError('SIP_TRUNK_NOT_FOUND', 'SIP trunk not found');
    return state;
  }

  async create(ctx: RequestContext, config: SipTrunkConfig): Promise<SipTrunkView> {
    const trunkId = this.ids.id('trk');
    const upstream = await this.provider.createTrunk({ trunkId, accountId: ctx.accountId, config });
    await this.run(ctx, trunkId, 'CreateSipTrunk', { config, providerRef: upstream.providerRef, terminationUri: upstream.terminationUri });
    return this.view(ctx, trunkId);
  }

  async update(ctx: RequestContext, trunkId: string, changes: SipTrunkChanges): Promise<SipTrunkView> {
    const before = await this.owned(ctx, trunkId);
    const r = await this.run(ctx, trunkId, 'UpdateSipTrunk', { changes });
    if (r.events.length > 0 && r.state.status === 'active') {
      try {
        await this.provider.updateTrunk({ providerRef: r.state.providerRef, config: r.state.config });
      } catch (err) {
        // put back what this request changed, so the record matches the trunk that really runs
        const undo = Object.fromEntries(Object.keys(r.events[0]!.type === 'SipTrunkUpdated' ? r.events[0]!.data.changes : {})
          .map((k) => [k, (before.config as Record<string, unknown>)[k]])) as SipTrunkChanges;
        await this.run(ctx, trunkId, 'UpdateSipTrunk', { changes: undo }).catch(() => undefined);
        throw err;
      }
    }
    return this.view(ctx, trunkId);
  }

  async delete(ctx: RequestContext, trunkId: string): Promise<{ success: true; id: string }> {
    const state = await this.owned(ctx, trunkId);
    await this.provider.deleteTrunk({ providerRef: state.providerRef });
    await this.run(ctx, trunkId, 'DeleteSipTrunk', {});
    return { success: true, id: trunkId };
  }
}

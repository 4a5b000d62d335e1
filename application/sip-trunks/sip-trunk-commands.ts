import { sipTrunkDecider, type SipTrunkChanges, type SipTrunkCommand, type SipTrunkConfig } from '../../domain/sip-trunk/sip-trunk.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import { streams } from '../../domain/shared/streams.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { SipTrunkQueries, SipTrunkView } from './sip-trunk-queries.port.js';
import type { SipTrunkProviderPort } from './sip-trunk-provider.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';

/**
 * SIP trunk use cases (spec 4.7). The upstream trunk is created before the local record (idempotent by the
 * trunk id) and deleted before the soft delete (idempotent), so a failure leaves nothing half-done locally.
 * Updates are decided locally first (the trunk aggregate owns the "URIs in use" rule) and then pushed
 * upstream as the full configuration; an upstream failure is answered 502 after the local change is undone.
 */
export class SipTrunkCommands {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly provider: SipTrunkProviderPort,
    private readonly queries: SipTrunkQueries,
  ) {}

  private run(ctx: RequestContext, cmd: CommandInput<SipTrunkCommand>) {
    return this.exec.execute(sipTrunkDecider, streams.sipTrunk(cmd.data.trunkId), cmd, ctx, { readYourWrites: true });
  }

  private async view(ctx: RequestContext, trunkId: string): Promise<SipTrunkView> {
    const v = await this.queries.get(ctx.accountId, trunkId);
    if (!v) throw new DomainError('SIP_TRUNK_NOT_FOUND', 'SIP trunk not found');
    return v;
  }

  private async owned(ctx: RequestContext, trunkId: string) {
    const { state } = await this.exec.load(sipTrunkDecider, streams.sipTrunk(trunkId));
    if (state.status !== 'active' || state.accountId !== ctx.accountId) throw new DomainError('SIP_TRUNK_NOT_FOUND', 'SIP trunk not found');
    return state;
  }

  async create(ctx: RequestContext, config: SipTrunkConfig): Promise<SipTrunkView> {
    const trunkId = this.ids.id('trk');
    const upstream = await this.provider.createTrunk({ trunkId, accountId: ctx.accountId, config });
    await this.run(ctx, { type: 'CreateSipTrunk', data: { trunkId, config, providerRef: upstream.providerRef, terminationUri: upstream.terminationUri } });
    return this.view(ctx, trunkId);
  }

  async update(ctx: RequestContext, trunkId: string, changes: SipTrunkChanges): Promise<SipTrunkView> {
    const before = await this.owned(ctx, trunkId);
    const r = await this.run(ctx, { type: 'UpdateSipTrunk', data: { trunkId, changes } });
    if (r.events.length > 0 && r.state.status === 'active') {
      try {
        await this.provider.updateTrunk({ providerRef: r.state.providerRef, config: r.state.config });
      } catch (err) {
        // put back what this request changed, so the record matches the trunk that really runs
        const undo = Object.fromEntries(Object.keys(r.events[0]!.type === 'SipTrunkUpdated' ? r.events[0]!.data.changes : {})
          .map((k) => [k, (before.config as Record<string, unknown>)[k]])) as SipTrunkChanges;
        await this.run(ctx, { type: 'UpdateSipTrunk', data: { trunkId, changes: undo } }).catch(() => undefined);
        throw err;
      }
    }
    return this.view(ctx, trunkId);
  }

  async delete(ctx: RequestContext, trunkId: string): Promise<{ success: true; id: string }> {
    const state = await this.owned(ctx, trunkId);
    await this.provider.deleteTrunk({ providerRef: state.providerRef });
    await this.run(ctx, { type: 'DeleteSipTrunk', data: { trunkId } });
    return { success: true, id: trunkId };
  }
}

import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../application/ports/event-store.port.js';
import { agentEventTypes, type AgentEvent } from '../domain/agent/agent.decider.js';
import { alreadyApplied, type Projector } from './shared/projector.js';
import type { ReadDb } from './shared/read-db.js';

export const agentsProjector: Projector = {
  name: 'agents_v1',
  handles: new Set<string>(agentEventTypes),
  tables: ['agents'],
  async apply(db: Kysely<ReadDb>, raw: RecordedEvent) {
    const e = raw as unknown as RecordedEvent<AgentEvent>;
    const revision = String(e.streamRevision);
    if (e.type === 'AgentCreated') {
      await db.insertInto('agents').values({
        agent_id: e.data.agentId, account_id: e.data.accountId, name: e.data.config.name, config: JSON.stringify(e.data.config),
        created_at: e.data.createdAt, deleted_at: null, revision,
      }).onConflict((oc) => oc.column('agent_id').doNothing()).execute();
      return;
    }
    const row = await db.selectFrom('agents').select(['revision', 'config']).where('agent_id', '=', e.data.agentId).executeTakeFirst();
    if (!row || alreadyApplied(row.revision, e)) return;
    switch (e.type) {
      case 'AgentUpdated': {
        const config = { ...(typeof row.config === 'string' ? JSON.parse(row.config) : row.config) as object, ...e.data.changes };
        await db.updateTable('agents').set({ config: JSON.stringify(config), name: (config as { name: string }).name, revision })
          .where('agent_id', '=', e.data.agentId).execute();
        return;
      }
      case 'AgentDeleted':
        await db.updateTable('agents').set({ deleted_at: e.data.deletedAt, revision }).where('agent_id', '=', e.data.agentId).execute();
        return;
      case 'AgentVoiceModeSwitched':
        await db.updateTable('agents').set({ revision }).where('agent_id', '=', e.data.agentId).execute();
        return;
    }
  },
};

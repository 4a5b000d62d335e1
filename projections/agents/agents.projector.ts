import { type Insertable, type Kysely, sql } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { AgentEvent } from '../../domain/agent/agent.decider.js';
import { guardedRow } from '../shared/guarded.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';
import { insertNew } from '../shared/row-fold.js';
import type { AgentsTable } from './tables.js';

/** The agent row, guarded: matches only while the row reflects an older revision of the stream. */
const agent = guardedRow(
  (db) => db.updateTable('agents'),
  (e: RecordedEvent<AgentEvent>) => ({ agent_id: e.data.agentId }),
);

type Created = RecordedEvent<Extract<AgentEvent, { type: 'AgentCreated' }>>;

/** New agents' rows, in chunks of one statement each; an agent already there stays as it is (a replay). */
const insertCreated = (db: Kysely<ReadDb>, events: readonly Created[]): Promise<void> =>
  insertNew(
    db,
    'agents',
    ['agent_id'],
    events.map(
      (e): Insertable<AgentsTable> => ({
        agent_id: e.data.agentId,
        account_id: e.data.accountId,
        name: e.data.config.name,
        config: JSON.stringify(e.data.config),
        created_at: e.data.createdAt,
        deleted_at: null,
        revision: rowRevision(e),
      }),
    ),
  );

/** `agents`: the configuration as JSON (the queries shape it), the name beside it for listing; deleted agents are kept, marked. */
export const agentsProjector = defineProjector<AgentEvent>({
  name: 'agents_v1',
  // it only writes: a batch's writes and its checkpoint go as one message (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['agents'],
  // the agents created one after another in a batch are one insert, not one each (on a server, one round trip each);
  // every other event is applied by its handler, in log order
  async batch(db, events) {
    let created: Created[] = [];
    for (const e of events) {
      if (e.type === 'AgentCreated') {
        created.push(e as Created);
        continue;
      }
      if (created.length > 0) await insertCreated(db, created);
      created = [];
      await agentsProjector.apply(db, e);
    }
    if (created.length > 0) await insertCreated(db, created);
  },
  on: {
    AgentCreated: (db, e) => insertCreated(db, [e]),
    async AgentUpdated(db, e) {
      // a partial update merges into the stored configuration in SQL (jsonb `||` replaces top-level keys, as
      // an object spread does), so no read of the old row is needed
      const changes = JSON.stringify(e.data.changes);
      await agent(db, e, {
        config: sql`config || ${changes}::jsonb`,
        name: sql<string>`(config || ${changes}::jsonb) ->> 'name'`,
      });
    },
    async AgentVoiceModeSwitched(db, e) {
      // the mode itself arrives with the AgentUpdated beside it; this fact only moves the revision
      await agent(db, e, {});
    },
    AgentDeleted: (db, e) => agent(db, e, { deleted_at: e.data.deletedAt }),
  },
});

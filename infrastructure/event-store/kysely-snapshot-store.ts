import { type Kysely, sql } from 'kysely';
import type { Snapshot, SnapshotStorePort } from '../../application/ports/snapshot-store.port.js';
import type { Db } from '../db/database.js';

/**
 * Snapshots in the PostgreSQL database beside the read models (with either event store). A save never replaces a
 * newer snapshot: two processes that snapshot one stream keep the further one.
 */
export class KyselySnapshotStore implements SnapshotStorePort {
  constructor(private readonly db: Kysely<Db>) {}

  async load(stream: string): Promise<Snapshot | null> {
    const r = await this.db
      .selectFrom('aggregate_snapshots')
      .select(['revision', 'version', 'state'])
      .where('stream_name', '=', stream)
      .executeTakeFirst();
    if (!r) return null;
    return { revision: BigInt(r.revision), version: r.version, state: typeof r.state === 'string' ? JSON.parse(r.state) : r.state };
  }

  async save(stream: string, s: Snapshot): Promise<void> {
    await this.db
      .insertInto('aggregate_snapshots')
      .values({ stream_name: stream, revision: String(s.revision), version: s.version, state: JSON.stringify(s.state) })
      .onConflict((oc) =>
        oc
          .column('stream_name')
          .doUpdateSet({
            revision: sql`excluded.revision`,
            version: sql`excluded.version`,
            state: sql`excluded.state`,
            taken_at: sql`now()`,
          })
          .where(sql<boolean>`aggregate_snapshots.revision < excluded.revision or aggregate_snapshots.version <> excluded.version`),
      )
      .execute();
  }
}

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sql } from 'kysely';
import { parseCheckpoint } from '../../application/ports/event-store.port.js';
import { type DatabaseHandle, openDatabase } from '../../infrastructure/db/database.js';
import { migrateToLatest } from '../../infrastructure/db/migrate.js';
import { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import { ev, TestClock } from '../support/fixtures.js';

/**
 * Appends made in one turn of the event loop go in one statement when the store gathers them (the embedded
 * default, docs/event-store.md#appending): one transaction, so their checkpoints share its transaction id.
 */
describe('PostgreSQL event store: appends gathered per event-loop turn', () => {
  let handle: DatabaseHandle;
  before(async () => {
    handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, poolSize: 4 });
    await migrateToLatest(handle.db as never);
    if (handle.kind === 'postgres') await sql`truncate events, streams restart identity`.execute(handle.db);
  });
  after(() => handle.close());

  /** the transactions that three appends made in the same turn were written in */
  async function transactionsOf(gatherAppends: boolean): Promise<number> {
    const store = new PgEventStore(handle.db, new TestClock(), { appendConcurrency: 1, gatherAppends });
    const results = await Promise.all(
      [1, 2, 3].map(() => store.appendToStream(`gather-${randomUUID()}`, [ev('Gathered')], { expectedRevision: 'no_stream' })),
    );
    return new Set(results.map((r) => parseCheckpoint(r.checkpoint)[0])).size;
  }

  it('writes the appends of one turn in one transaction', async () => {
    expect(await transactionsOf(true)).to.equal(1);
  });

  it('without gathering, the first goes alone and the others wait for it', async () => {
    expect(await transactionsOf(false)).to.equal(2);
  });
});

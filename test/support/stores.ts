import type { EventStorePort } from '../../application/ports/event-store.port.js';
import { type DatabaseHandle, openDatabase } from '../../infrastructure/db/database.js';
import { migrateToLatest } from '../../infrastructure/db/migrate.js';
// static, not `await import()`: mocha loads specs through require, and a dynamic import would load a second
// copy of the port module, breaking `instanceof WrongExpectedRevisionError`
import { EsdbEventStore } from '../../infrastructure/event-store/esdb-event-store.js';
import { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import { emptyTables } from './empty-tables.js';
import { resetTestEventStore } from './esdb-reset.js';
import { TestClock } from './fixtures.js';
import { migratedImage } from './http.js';
import { lendPglite } from './pglite-pool.js';

export type StoreUnderTest = { store: EventStorePort; handle: DatabaseHandle; close: () => Promise<void> };

/** A fresh database: PGlite in memory (of the pool: test/support/pglite-pool.ts), or (with DATABASE_URL) a server whose tables are emptied first. */
export async function freshDatabase(): Promise<DatabaseHandle> {
  const handle = process.env.DATABASE_URL
    ? await openDatabase({ databaseUrl: process.env.DATABASE_URL })
    : await lendPglite(process.env.PGLITE_THREAD !== 'false', await migratedImage());
  await migrateToLatest(handle.db as never);
  if (handle.kind === 'postgres') await emptyTables(handle.db);
  await resetTestEventStore();
  return handle;
}

/** The event store the suites run against: EventStoreDB when EVENTSTORE_URL is set, else PostgreSQL tables. */
export async function storeUnderTest(clock = new TestClock()): Promise<StoreUnderTest> {
  const handle = await freshDatabase();
  const store = process.env.EVENTSTORE_URL
    ? new EsdbEventStore(process.env.EVENTSTORE_URL)
    : // gathered as the platform makes it (infrastructure/platform/module.ts)
      new PgEventStore(handle.db, clock, { pollIntervalMs: 20, gatherAppends: true, gatherReads: true });
  return {
    store,
    handle,
    close: async () => {
      await store.close();
      await handle.close();
    },
  };
}

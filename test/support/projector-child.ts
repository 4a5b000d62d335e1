/**
 * A projector process for the kill test (test/integration/projector-kill.int.spec.ts). It projects events of
 * type KILL_TYPE into `kill_test_counts` (one row per event, n = times applied). With STALL_AT=k it announces
 * "MID-BATCH" on stdout after writing the k-th row of a batch and then hangs inside the open transaction,
 * waiting for the parent's SIGKILL. Without STALL_AT it runs until everything is projected and prints "DONE".
 */
import { type Kysely, sql } from 'kysely';
import { openDatabase } from '../../infrastructure/db/database.js';
import { migrateToLatest } from '../../infrastructure/db/migrate.js';
import { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import { ProjectionEngine } from '../../projections/shared/engine.js';
import { eventByEvent, type Projector } from '../../projections/shared/projector.js';
import type { ReadDb } from '../../projections/shared/read-db.js';

const type = process.env.KILL_TYPE!;
const total = Number(process.env.KILL_TOTAL);
const stallAt = process.env.STALL_AT ? Number(process.env.STALL_AT) : null;

const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.KILL_DATA_DIR });
await migrateToLatest(handle.db as never);
const db = handle.db as unknown as Kysely<ReadDb>;
await sql`create table if not exists kill_test_counts (event_id text primary key, n int not null)`.execute(db);
const store = new PgEventStore(handle.db, { now: () => new Date() }, { pollIntervalMs: 20 });

let applied = 0;
const projector: Projector = eventByEvent({
  name: `kill_${type}`,
  handles: new Set([type]),
  tables: [],
  async apply(trx, e) {
    await sql`insert into kill_test_counts (event_id, n) values (${e.id}, 1) on conflict (event_id) do update set n = kill_test_counts.n + 1`.execute(
      trx,
    );
    applied++;
    if (stallAt !== null && applied === stallAt) {
      process.stdout.write('MID-BATCH\n');
      await new Promise(() => undefined); // hang with the batch transaction open until killed
    }
  },
});
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const engine = new ProjectionEngine(store, db, [projector], silent, { batchSize: 25 });
await engine.start();
for (;;) {
  const r = await sql<{ c: number }>`select count(*)::int as c from kill_test_counts`.execute(db);
  if ((r.rows[0]?.c ?? 0) >= total) break;
  await new Promise((res) => setTimeout(res, 20));
}
await engine.stop();
await handle.close();
// a pipe is written asynchronously: exit only once "DONE" has been handed over, or the parent may never see it
process.stdout.write('DONE\n', () => process.exit(0));

import { type Kysely, sql } from 'kysely';
import {
  type Checkpoint,
  compareCheckpoints,
  type EventStorePort,
  type RecordedEvent,
  START,
} from '../../application/ports/event-store.port.js';
import { ensureCheckpoint } from './engine.js';
import type { Projector } from './projector.js';
import type { ReadDb } from './read-db.js';

/** How long a rebuild waits for a live projector that is behind the replay to reach it before comparing. */
const LIVE_CATCH_UP_MS = 2000;

export type RebuildReport = Readonly<{
  projector: string;
  events: number;
  checkpoint: Checkpoint;
  /** per table: rows that differ between the rebuilt and the live table (null when live was behind) */
  differences: Readonly<Record<string, number>> | null;
  equal: boolean | null;
  swapped: boolean;
}>;

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/**
 * Replays one projector from position zero into fresh tables (a schema of its own, tables created LIKE the
 * live ones), compares them with the live tables at the same checkpoint, and (unless checkOnly) swaps the
 * rebuilt rows in. The final step holds the live checkpoint row locked, so a running projector cannot
 * move in between; it simply retries its batch afterwards.
 */
export async function rebuildProjector(
  db: Kysely<ReadDb>,
  store: EventStorePort,
  p: Projector,
  o: { checkOnly?: boolean; batchSize?: number; onProgress?: (done: number, total: number) => void } = {},
): Promise<RebuildReport> {
  const schema = `rebuild_${p.name}`;
  const filter = { eventTypes: [...p.handles] };
  const batchSize = o.batchSize ?? 1000;
  await ensureCheckpoint(db, p.name);

  // how much there is to do, for the progress bar (a count on PostgreSQL, a read on EventStoreDB)
  const total = await store.countAll({ filter });

  await sql.raw(`drop schema if exists ${ident(schema)} cascade`).execute(db);
  await sql.raw(`create schema ${ident(schema)}`).execute(db);
  for (const t of p.tables) await sql.raw(`create table ${ident(schema)}.${ident(t)} (like public.${ident(t)} including all)`).execute(db);

  const apply = async (trx: Kysely<ReadDb>, batch: readonly RecordedEvent[]) => {
    await p.applyBatch(trx.withSchema(schema), batch);
  };

  let cursor: Checkpoint = START;
  let done = 0;
  // the next page is read while this one is applied (on a server they are two connections' work at once)
  let next = store.readAll({ after: cursor, filter, maxCount: batchSize });
  for (;;) {
    const batch = await next;
    if (batch.length === 0) break;
    cursor = batch[batch.length - 1]!.checkpoint;
    next = store.readAll({ after: cursor, filter, maxCount: batchSize });
    next.catch(() => undefined); // awaited on the next turn; a failure of this turn's write must not leave it unhandled
    await db.transaction().execute((trx) => apply(trx, batch));
    done += batch.length;
    o.onProgress?.(done, Math.max(total, done));
  }

  const liveCheckpoint = async () =>
    (await db.selectFrom('projection_checkpoints').select('checkpoint').where('name', '=', p.name).executeTakeFirstOrThrow()).checkpoint;
  // Catch the rebuild up to the live checkpoint (events appended while we replayed), then compare and swap
  // under the row lock. No event-store read happens inside that transaction (PGlite has one connection);
  // if the live projector moved meanwhile, catch up again.
  let waited = 0;
  for (;;) {
    const target = await liveCheckpoint();
    // a running projector that lags (docs/event-store.md#lagging-projectors) gets a moment to reach the replay,
    // so that the two can be compared; a stopped one stays behind, and the report says so
    if (compareCheckpoints(cursor, target) > 0 && waited < LIVE_CATCH_UP_MS) {
      await new Promise((r) => setTimeout(r, 50));
      waited += 50;
      continue;
    }
    while (compareCheckpoints(cursor, target) < 0) {
      const batch = (await store.readAll({ after: cursor, filter, maxCount: batchSize })).filter(
        (e) => compareCheckpoints(e.checkpoint, target) <= 0,
      );
      if (batch.length === 0) break;
      await db.transaction().execute((trx) => apply(trx, batch));
      cursor = batch[batch.length - 1]!.checkpoint;
      done += batch.length;
    }
    const report = await db.transaction().execute(async (trx): Promise<RebuildReport | null> => {
      const live = await trx
        .selectFrom('projection_checkpoints')
        .select('checkpoint')
        .where('name', '=', p.name)
        .forUpdate()
        .executeTakeFirstOrThrow();
      if (live.checkpoint !== target && compareCheckpoints(cursor, live.checkpoint) < 0) return null; // moved: go round again
      let differences: Record<string, number> | null = null;
      if (compareCheckpoints(cursor, live.checkpoint) === 0) {
        differences = {};
        for (const t of p.tables) {
          const q = `select count(*)::int as n from ((select * from ${ident(schema)}.${ident(t)} except all select * from public.${ident(t)})
                     union all (select * from public.${ident(t)} except all select * from ${ident(schema)}.${ident(t)})) d`;
          const r = await sql.raw<{ n: number }>(q).execute(trx);
          differences[t] = Number(r.rows[0]?.n ?? 0);
        }
      }
      const equal = differences ? Object.values(differences).every((n) => n === 0) : null;
      let swapped = false;
      if (!o.checkOnly) {
        for (const t of p.tables) {
          await sql.raw(`delete from public.${ident(t)}`).execute(trx);
          await sql.raw(`insert into public.${ident(t)} select * from ${ident(schema)}.${ident(t)}`).execute(trx);
        }
        const next = compareCheckpoints(cursor, live.checkpoint) > 0 ? cursor : live.checkpoint;
        await trx
          .updateTable('projection_checkpoints')
          .set({ checkpoint: next, updated_at: new Date() })
          .where('name', '=', p.name)
          .execute();
        swapped = true;
      }
      await sql.raw(`drop schema ${ident(schema)} cascade`).execute(trx);
      return { projector: p.name, events: done, checkpoint: cursor, differences, equal, swapped };
    });
    if (report) {
      o.onProgress?.(report.events, Math.max(total, report.events));
      return report;
    }
  }
}

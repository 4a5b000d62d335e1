import { type Kysely, sql } from 'kysely';
import { type Checkpoint, type EventStorePort, START } from '../../application/ports/event-store.port.js';
import type { Projector } from './projector.js';
import type { ReadDb } from './read-db.js';

export type ReplayReport = Readonly<{
  projector: string;
  /** the scratch schema that holds the tables as they were */
  schema: string;
  until: string;
  /** events applied (recorded at or before `until`) */
  events: number;
  /** events of the projector's types recorded after `until`, left out */
  skipped: number;
  /** rows per table in the scratch schema */
  rows: Readonly<Record<string, number>>;
}>;

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** The scratch schema a replay of `projector` writes to. */
export const replaySchema = (projector: string) => `replay_${projector}`;

/**
 * Audit replay of a read model (docs/audit.md#read-models-as-they-were): replays one projector from position
 * zero into a scratch schema (tables created LIKE the live ones), applying only the events recorded at or before
 * `until`, so the tables show what the read model held at that instant. The live tables and the projector's
 * checkpoint are not touched; the schema stays for inspection until the next replay of the same projector, or
 * `drop schema … cascade`.
 */
export async function replayProjector(
  db: Kysely<ReadDb>,
  store: EventStorePort,
  p: Projector,
  o: { until: string; batchSize?: number; onProgress?: (done: number, total: number) => void },
): Promise<ReplayReport> {
  const schema = replaySchema(p.name);
  const filter = { eventTypes: [...p.handles] };
  const batchSize = o.batchSize ?? 500;
  const until = Date.parse(o.until);

  let total = 0;
  for (let after = START; ; ) {
    const page = await store.readAll({ after, filter, maxCount: 5000 });
    total += page.length;
    if (page.length < 5000) break;
    after = page[page.length - 1]!.checkpoint;
  }

  await sql.raw(`drop schema if exists ${ident(schema)} cascade`).execute(db);
  await sql.raw(`create schema ${ident(schema)}`).execute(db);
  for (const t of p.tables) await sql.raw(`create table ${ident(schema)}.${ident(t)} (like public.${ident(t)} including all)`).execute(db);

  let cursor: Checkpoint = START;
  let applied = 0;
  let skipped = 0;
  let seen = 0;
  for (;;) {
    const batch = await store.readAll({ after: cursor, filter, maxCount: batchSize });
    if (batch.length === 0) break;
    // the log's order is the order events became visible; an event's time decides whether it is shown
    const upTo = batch.filter((e) => p.handles.has(e.type) && Date.parse(e.createdAt) <= until);
    applied += upTo.length;
    skipped += batch.length - upTo.length;
    await db.transaction().execute(async (trx) => {
      const target = trx.withSchema(schema);
      for (const e of upTo) await p.apply(target, e);
    });
    cursor = batch[batch.length - 1]!.checkpoint;
    seen += batch.length;
    o.onProgress?.(seen, Math.max(total, seen));
  }

  const rows: Record<string, number> = {};
  for (const t of p.tables) {
    const r = await sql.raw<{ n: number }>(`select count(*)::int as n from ${ident(schema)}.${ident(t)}`).execute(db);
    rows[t] = Number(r.rows[0]?.n ?? 0);
  }
  return { projector: p.name, schema, until: new Date(until).toISOString(), events: applied, skipped, rows };
}

import { type Kysely, sql } from 'kysely';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { IntervalWorker } from '../workers.js';

/** What a table's activity counters say since it was last analyzed and vacuumed (`pg_stat_user_tables`). */
type TableActivity = {
  relname: string;
  n_live_tup: string | number;
  n_dead_tup: string | number;
  n_mod_since_analyze: string | number;
};

/**
 * The tables an analysis samples less of than PostgreSQL's default (`default_statistics_target` 100: 30,000 rows), and
 * the target it uses for them (docs/event-store.md#embedded-maintenance). The events table is the largest and grows
 * with every write; its filtered columns (type, category, stream) have few common values. Sampling 3,000 rows took
 * 12 ms instead of 82-98 ms over 40,000 events, and an analysis holds the one session while it runs.
 */
export const SAMPLED_TABLES: Readonly<Record<string, number>> = { events: 10 };

/**
 * The pause between two tables' statements in a pass (docs/event-store.md#embedded-maintenance): a pass that analyzed
 * three tables back to back held the one session for 30 ms within 40, and a text whose statements met all three waited
 * behind each; apart, a text meets one at most.
 */
export const BETWEEN_TABLES_MS = 100;

/** What one pass did: the tables analyzed (vacuumed ones are analyzed too) and vacuumed. */
export type MaintenancePass = { analyzed: string[]; vacuumed: string[] };

/**
 * PostgreSQL's thresholds (docs/event-store.md#embedded-maintenance): a table is analyzed after 50 + 10% of its rows
 * changed since its last analysis, and vacuumed once 50 + 20% of its rows are dead. (Not once many were inserted,
 * as a server also does for the visibility map: embedded, that vacuum of the events table held the one session
 * for about 100 ms at a time under load, for index-only scans the platform hardly makes.)
 */
export function due(t: TableActivity): { analyze: boolean; vacuum: boolean } {
  const live = Number(t.n_live_tup);
  const vacuum = Number(t.n_dead_tup) > 50 + 0.2 * live;
  return { vacuum, analyze: vacuum || Number(t.n_mod_since_analyze) > 50 + 0.1 * live };
}

/**
 * PostgreSQL's autovacuum for the embedded database (docs/event-store.md#embedded-maintenance). PGlite runs no
 * background processes, so without this no table is ever analyzed (the planner then guesses at every table's size,
 * and a query that suits a table of ten rows runs against one of ten thousand) nor vacuumed (dead rows of updated
 * and deleted read-model rows pile up). Each pass flushes the activity counters, reads them, and analyzes or
 * vacuums each table past PostgreSQL's own thresholds, one statement per table, `BETWEEN_TABLES_MS` apart, so that
 * other statements run between.
 */
export class EmbeddedMaintenance<DB> extends IntervalWorker<MaintenancePass> {
  readonly name = 'embedded-maintenance';

  constructor(
    private readonly db: Kysely<DB>,
    log: LoggerPort,
    intervalMs: number,
  ) {
    super(log, intervalMs);
  }

  async runOnce(): Promise<MaintenancePass> {
    // the counters a statement adds are flushed to where pg_stat_user_tables reads them only now and then
    await sql`select pg_stat_force_next_flush()`.execute(this.db);
    const tables = await sql<TableActivity>`
      select relname, n_live_tup, n_dead_tup, n_mod_since_analyze
        from pg_stat_user_tables where schemaname = 'public' order by relname`.execute(this.db);
    const pass: MaintenancePass = { analyzed: [], vacuumed: [] };
    for (const t of tables.rows) {
      const d = due(t);
      if (!d.analyze) continue;
      if (pass.analyzed.length > 0) await new Promise((r) => setTimeout(r, BETWEEN_TABLES_MS));
      const started = performance.now();
      const table = sql.table(t.relname);
      const target = SAMPLED_TABLES[t.relname];
      if (target !== undefined && !d.vacuum)
        // `set local` lasts as long as the transaction; a vacuum cannot run in one, so a table due for it is sampled as usual
        await this.db.transaction().execute(async (trx) => {
          await sql`set local default_statistics_target = ${sql.lit(target)}`.execute(trx);
          await sql`analyze ${table}`.execute(trx);
        });
      else await (d.vacuum ? sql`vacuum (analyze) ${table}` : sql`analyze ${table}`).execute(this.db);
      if (d.vacuum) pass.vacuumed.push(t.relname);
      pass.analyzed.push(t.relname);
      this.log.debug({ table: t.relname, vacuum: d.vacuum, ms: Math.round(performance.now() - started) }, 'embedded maintenance');
    }
    return pass;
  }
}

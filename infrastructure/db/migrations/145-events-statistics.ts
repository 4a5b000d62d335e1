import { type Kysely, sql } from 'kysely';

/**
 * No planner statistics for the events' `data` and `metadata` (docs/event-store.md#embedded-maintenance): no query
 * filters on those documents, and analyzing them was most of the cost of analyzing the events table (about 100 ms
 * of the one embedded session at a time, under load).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events alter column data set statistics 0, alter column metadata set statistics 0`.execute(db);
}

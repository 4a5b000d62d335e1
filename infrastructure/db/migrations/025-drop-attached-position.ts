import { type Kysely, sql } from 'kysely';

/**
 * `attached_position` (the global position of a number's attach) was replaced by `attached_order` (migration
 * 023): nothing reads it any more. Dropped with the index that was built on it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists phone_numbers_agent_idx`.execute(db);
  await sql`alter table phone_numbers drop column if exists attached_position`.execute(db);
}

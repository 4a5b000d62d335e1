import { type Kysely, sql } from 'kysely';

/** The call sweeper's look for calls no process holds (docs/calls.md#how-a-call-ends): unfinished calls by age. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index calls_unfinished_idx on calls (created_at) where status = 'in-progress'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists calls_unfinished_idx`.execute(db);
}

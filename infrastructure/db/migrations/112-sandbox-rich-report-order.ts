import { type Kysely, sql } from 'kysely';

/** A message's reports are claimed in order (docs/sandbox.md#rich-reports): the claim looks up a message's earlier ones. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index sandbox_rich_reports_message_idx on sandbox_rich_reports (message_id) where reported_at is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists sandbox_rich_reports_message_idx`.execute(db);
}

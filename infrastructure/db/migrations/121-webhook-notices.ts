import { type Kysely, sql } from 'kysely';

/** Health notices (and the index behind recovering failed deliveries) of the webhook delivery log: warnings before a webhook is disabled, disables, recoveries (docs/webhooks.md#notices). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table webhook_notices (
      notice_id text primary key,
      account_id text not null,
      webhook_id text not null,
      kind text not null,
      consecutive_failures integer,
      at timestamptz not null,
      mail_status text,
      mailed_to text
    )`.execute(db);
  await sql`create index webhook_notices_account_idx on webhook_notices (account_id, at desc)`.execute(db);
  // POST /v1/webhooks/deliveries/recover: the account's failed deliveries by when they ended
  await sql`create index webhook_deliveries_failed_idx on webhook_deliveries (account_id, finished_at) where status = 'failed'`.execute(db);
}

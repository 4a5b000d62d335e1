import { type Kysely, sql } from 'kysely';

/**
 * The sandbox SMS carrier's own state (docs/sandbox.md, "Messaging"): every submission it was asked for, and
 * the receipts it will report, each due at a time on the platform's Clock and claimed by one worker at a time.
 * These tables belong to the simulated carrier, not to the platform's read models.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table sandbox_sms_submissions (
      idempotency_key text primary key,
      carrier_message_id text not null unique,
      account_id text not null,
      from_number text not null,
      to_number text not null,
      body text not null,
      media_urls jsonb not null,
      status text not null,
      failure_reason text,
      error_code text,
      rate_limited boolean not null default false,
      submitted_at timestamptz not null,
      accepted_at timestamptz
    )`.execute(db);
  await sql`create index sandbox_sms_submissions_to_idx on sandbox_sms_submissions (to_number, submitted_at)`.execute(db);
  await sql`create index sandbox_sms_submissions_rate_idx on sandbox_sms_submissions (from_number, accepted_at)`.execute(db);
  await sql`
    create table sandbox_sms_receipts (
      receipt_id text not null,
      copy smallint not null,
      carrier_message_id text not null,
      status text not null,
      failure_reason text,
      error_code text,
      happened_at timestamptz not null,
      due_at timestamptz not null,
      claimed_by text,
      claimed_until timestamptz,
      attempts integer not null default 0,
      last_error text,
      reported_at timestamptz,
      primary key (receipt_id, copy)
    )`.execute(db);
  await sql`create index sandbox_sms_receipts_due_idx on sandbox_sms_receipts (due_at) where reported_at is null`.execute(db);
  await sql`create index sandbox_sms_receipts_message_idx on sandbox_sms_receipts (carrier_message_id)`.execute(db);
}

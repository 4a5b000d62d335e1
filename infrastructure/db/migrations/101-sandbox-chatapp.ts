import { type Kysely, sql } from 'kysely';

/**
 * The sandbox chat platform's own state (docs/sandbox.md#chat-app-the-sandbox-chat-platform): numbers added to its
 * business accounts, registrations, submitted templates, messages it was asked to send, and the reports (message
 * statuses, template reviews) it will make, each due at a time on the platform's Clock and claimed by one worker at
 * a time. These tables belong to the simulated platform, not to the read models.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table sandbox_chatapp_numbers (
      phone_number_id text primary key,
      business_account_id text not null,
      phone_number text not null unique,
      verified_name text,
      created_at timestamptz not null
    )`.execute(db);
  await sql`
    create table sandbox_chatapp_registrations (
      phone_number_id text primary key,
      registered_at timestamptz not null
    )`.execute(db);
  await sql`
    create table sandbox_chatapp_templates (
      platform_template_id text primary key,
      business_account_id text not null,
      name text not null,
      language text not null,
      category text not null,
      body text not null,
      status text not null,
      reason text,
      submitted_at timestamptz not null,
      decides_at timestamptz not null
    )`.execute(db);
  await sql`
    create table sandbox_chatapp_messages (
      idempotency_key text primary key,
      platform_message_id text not null unique,
      phone_number_id text not null,
      to_number text not null,
      kind text not null,
      body text not null,
      template jsonb,
      status text not null,
      error_code integer,
      submitted_at timestamptz not null
    )`.execute(db);
  await sql`create index sandbox_chatapp_messages_to_idx on sandbox_chatapp_messages (to_number, submitted_at)`.execute(db);
  await sql`
    create table sandbox_chatapp_reports (
      report_id text primary key,
      kind text not null,
      subject text not null,
      payload jsonb not null,
      due_at timestamptz not null,
      claimed_by text,
      claimed_until timestamptz,
      attempts integer not null default 0,
      last_error text,
      reported_at timestamptz
    )`.execute(db);
  await sql`create index sandbox_chatapp_reports_due_idx on sandbox_chatapp_reports (due_at) where reported_at is null`.execute(db);
  await sql`create index sandbox_chatapp_reports_subject_idx on sandbox_chatapp_reports (subject)`.execute(db);
}

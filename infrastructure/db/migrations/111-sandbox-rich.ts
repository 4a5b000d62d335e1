import { type Kysely, sql } from 'kysely';

/**
 * The sandbox rich-messaging provider's own state (docs/sandbox.md#rich-messaging-the-sandbox-provider): the numbers
 * it serves, the messages it was given and the statuses it will report (due on the platform's Clock, claimed by one
 * worker at a time), the contact cards and chat backgrounds it holds, and a log of typing indicators and reactions.
 * These tables belong to the simulated provider, not to the read models.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table sandbox_rich_lines (phone_number text primary key, added_at timestamptz not null)`.execute(db);
  await sql`
    create table sandbox_rich_messages (
      idempotency_key text primary key,
      provider_message_id text not null unique,
      from_number text not null,
      to_number text not null,
      body text not null,
      media_urls jsonb not null,
      send_style text,
      reply_to text,
      submitted_at timestamptz not null
    )`.execute(db);
  await sql`create index sandbox_rich_messages_to_idx on sandbox_rich_messages (to_number, submitted_at)`.execute(db);
  await sql`
    create table sandbox_rich_reports (
      report_id text primary key,
      message_id text not null,
      provider_message_id text not null,
      status text not null,
      due_at timestamptz not null,
      claimed_by text,
      claimed_until timestamptz,
      attempts integer not null default 0,
      reported_at timestamptz
    )`.execute(db);
  await sql`create index sandbox_rich_reports_due_idx on sandbox_rich_reports (due_at) where reported_at is null`.execute(db);
  await sql`
    create table sandbox_rich_contact_cards (
      line text primary key,
      version integer not null,
      card jsonb,
      avatar_type text,
      avatar_bytes integer,
      avatar_sha256 text,
      updated_at timestamptz not null
    )`.execute(db);
  await sql`
    create table sandbox_rich_backgrounds (
      line text not null,
      participant text not null,
      idempotency_key text,
      content_type text,
      bytes integer,
      sha256 text,
      status text not null,
      updated_at timestamptz not null,
      primary key (line, participant)
    )`.execute(db);
  await sql`
    create table sandbox_rich_actions (
      action_id text primary key,
      kind text not null,
      from_number text not null,
      to_number text not null,
      detail jsonb not null,
      at timestamptz not null
    )`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * The chat-application channel's read models (docs/chatapp.md): connections (never their tokens), bound platform
 * numbers, templates with their review status, and the last inbound message of each chat conversation (its 24-hour
 * window). Also the index the send path uses to find a participant's most recent conversation on a line.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table chatapp_connections (
      connection_id text primary key,
      account_id text not null,
      business_account_id text not null,
      business_name text,
      status text not null,
      failure_reason text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      revision bigint not null
    )`.execute(db);
  await sql`create index chatapp_connections_account_idx on chatapp_connections (account_id, created_at, connection_id)`.execute(db);
  await sql`
    create table chatapp_numbers (
      binding_id text primary key,
      account_id text not null,
      connection_id text not null,
      phone_number_id text not null,
      phone_number text,
      verified_name text,
      agent_id text,
      line_id text,
      native_number_id text,
      status text not null,
      failure_reason text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      revision bigint not null
    )`.execute(db);
  await sql`create index chatapp_numbers_connection_idx on chatapp_numbers (connection_id, created_at, binding_id)`.execute(db);
  await sql`create index chatapp_numbers_line_idx on chatapp_numbers (account_id, line_id) where status = 'bound'`.execute(db);
  await sql`create index chatapp_numbers_phone_idx on chatapp_numbers (account_id, phone_number) where status = 'bound'`.execute(db);
  await sql`
    create table chatapp_templates (
      template_id text primary key,
      account_id text not null,
      connection_id text not null,
      name text not null,
      language text not null,
      category text not null,
      body text not null,
      header text,
      buttons jsonb not null,
      parameter_format text not null,
      variables jsonb not null,
      status text not null,
      rejection_reason text,
      platform_template_id text,
      submission integer not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      revision bigint not null
    )`.execute(db);
  await sql`create index chatapp_templates_connection_idx on chatapp_templates (connection_id, created_at, template_id)`.execute(db);
  await sql`create index chatapp_templates_platform_idx on chatapp_templates (platform_template_id)`.execute(db);
  await sql`
    create table chatapp_windows (
      conversation_id text primary key,
      account_id text not null,
      line_id text not null,
      participant text not null,
      last_inbound_at timestamptz not null,
      revision bigint not null
    )`.execute(db);
  await sql`create index chatapp_windows_line_idx on chatapp_windows (account_id, line_id, participant)`.execute(db);
  await sql`create index conversations_line_participant_idx on conversations (account_id, phone_number_id, participant, last_message_at desc)`.execute(
    db,
  );
}

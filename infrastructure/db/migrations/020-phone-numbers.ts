import { type Kysely, sql } from 'kysely';

/**
 * Phone numbers, SIP trunks, and the message and call rows a number's history is read from. Every row
 * carries `account_id` first and the stream revision it reflects. `messages` and `calls` are filled by the
 * messaging and calls capabilities; the numbers capability only reads them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table phone_numbers (
      account_id text not null,
      number_id text primary key,
      phone_number text,
      country text not null,
      area_code text,
      type text not null default 'sms',
      status text not null,
      agent_id text,
      attached_position bigint,
      sip_trunk_id text,
      renewal_status text not null default 'ok',
      paid_through timestamptz,
      failure_code text,
      requested_at timestamptz not null,
      created_at timestamptz,
      released_at timestamptz,
      revision bigint not null
    )`.execute(db);
  await sql`create index phone_numbers_account_idx on phone_numbers (account_id, status, created_at, number_id)`.execute(db);
  await sql`create index phone_numbers_agent_idx on phone_numbers (account_id, agent_id, attached_position)`.execute(db);
  await sql`create index phone_numbers_renewal_idx on phone_numbers (status, paid_through)`.execute(db);

  await sql`
    create table sip_trunks (
      account_id text not null,
      trunk_id text primary key,
      name text not null,
      transfers text not null,
      transfer_caller_id text not null,
      uris jsonb not null,
      number_ids jsonb not null,
      provider_ref text not null,
      termination_uri text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz,
      revision bigint not null
    )`.execute(db);
  await sql`create index sip_trunks_account_idx on sip_trunks (account_id, deleted_at, created_at, trunk_id)`.execute(db);

  await sql`
    create table messages (
      account_id text not null,
      message_id text primary key,
      conversation_id text,
      phone_number_id text,
      agent_id text,
      direction text not null,
      channel text,
      from_number text not null,
      to_number text not null,
      body text not null default '',
      media_urls jsonb not null default '[]',
      status text,
      failure_reason text,
      reply_to_message_id text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      revision bigint not null
    )`.execute(db);
  await sql`create index messages_number_idx on messages (account_id, phone_number_id, created_at, message_id)`.execute(db);
  await sql`create index messages_conversation_idx on messages (account_id, conversation_id, created_at)`.execute(db);

  await sql`
    create table calls (
      account_id text not null,
      call_id text primary key,
      agent_id text,
      phone_number_id text,
      phone_number text,
      direction text not null,
      from_number text not null,
      to_number text not null,
      status text not null,
      started_at timestamptz not null,
      ended_at timestamptz,
      duration_seconds integer,
      disconnection_reason text,
      last_transcript_snippet text,
      recording_enabled boolean not null default false,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      revision bigint not null
    )`.execute(db);
  await sql`create index calls_number_idx on calls (account_id, phone_number_id, started_at, call_id)`.execute(db);
  await sql`create index calls_agent_idx on calls (account_id, agent_id, started_at)`.execute(db);

  await sql`
    create table number_lookup_cache (
      account_id text not null,
      phone_number text not null,
      result jsonb not null,
      looked_up_at timestamptz not null,
      primary key (account_id, phone_number)
    )`.execute(db);
}

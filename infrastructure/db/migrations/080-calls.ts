import { type Kysely, sql } from 'kysely';

/**
 * The read side of voice calls (docs/calls.md#the-call-record). The `calls` table was created early, by migration
 * 020; this adds what the call record shows (answer, outcome, summary, recording, transfer, SIP bridge, the
 * settings the call was placed with), the indexes of the account's call list, one row per caller or agent turn
 * (`call_turns`), and the stored audio of recorded calls (`call_recordings`: not a read model, written by the
 * recording step and never rebuilt).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table calls
      add column type text not null default 'pstn',
      add column mode text,
      add column phase text not null default 'placed',
      add column voice text,
      add column answered_at timestamptz,
      add column answered_by text,
      add column engine_call_id text,
      add column disconnection_detail text,
      add column summary text,
      add column user_sentiment text,
      add column call_successful boolean,
      add column recording boolean not null default false,
      add column recording_available boolean not null default false,
      add column recording_duration_ms integer,
      add column transferred_to text,
      add column sip_uri text,
      add column sip_failures jsonb not null default '[]',
      add column unknown_variables jsonb not null default '[]',
      add column metadata jsonb,
      add column turn_count integer not null default 0,
      add column last_activity_at timestamptz`.execute(db);
  // the account's list, newest first, and its status filter (direction and type narrow these rows further)
  await sql`create index calls_account_idx on calls (account_id, started_at desc, call_id desc)`.execute(db);
  await sql`create index calls_account_status_idx on calls (account_id, status, started_at desc, call_id desc)`.execute(db);

  await sql`
    create table call_turns (
      account_id text not null,
      call_id text not null,
      seq integer not null,
      turn_id text not null,
      role text not null,
      text text not null,
      spoken text not null,
      interrupted boolean not null default false,
      source text,
      confidence double precision,
      reply_to text,
      silent_reason text,
      request_ms integer,
      first_byte_ms integer,
      speech_start_ms integer,
      actions jsonb not null default '[]',
      started_at timestamptz not null,
      ended_at timestamptz not null,
      revision bigint not null,
      primary key (call_id, seq)
    )`.execute(db);
  await sql`create unique index call_turns_turn_idx on call_turns (call_id, turn_id)`.execute(db);

  await sql`
    create table call_recordings (
      call_id text primary key,
      account_id text not null,
      wav bytea not null,
      duration_ms integer not null,
      created_at timestamptz not null
    )`.execute(db);
}

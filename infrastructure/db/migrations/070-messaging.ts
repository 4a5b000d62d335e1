import { type Kysely, sql } from 'kysely';

/**
 * The messaging read models (docs/messaging.md#reading): conversations, the message columns the lifecycle fills,
 * reactions, carrier ids (receipts name messages by them), opt-outs in force, daily message analytics; and the
 * Idempotency-Key answers of sends (not a read model: written by the request, expired after 24 hours).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table conversations (
      account_id text not null,
      conversation_id text primary key,
      phone_number_id text not null,
      phone_number text not null,
      agent_id text,
      participant text not null,
      channel text not null default 'native',
      is_group boolean not null default false,
      group_id text,
      group_name text,
      group_icon_url text,
      participants jsonb,
      message_count integer not null default 0,
      inbound_count integer not null default 0,
      outbound_since_reply integer not null default 0,
      reengagement_locked boolean not null default false,
      last_message_at timestamptz not null,
      last_message_preview text not null default '',
      conversation_state jsonb,
      created_at timestamptz not null,
      revision bigint not null
    )`.execute(db);
  await sql`create index conversations_account_idx on conversations (account_id, last_message_at desc, conversation_id)`.execute(db);
  await sql`create index conversations_agent_idx on conversations (account_id, agent_id, last_message_at desc)`.execute(db);

  await sql`alter table messages add column encoding text`.execute(db);
  await sql`alter table messages add column segments integer`.execute(db);
  await sql`alter table messages add column error_code text`.execute(db);
  await sql`alter table messages add column failure_category text`.execute(db);
  await sql`alter table messages add column retryable boolean`.execute(db);
  await sql`alter table messages add column delivered_at timestamptz`.execute(db);
  await sql`alter table messages add column read_at timestamptz`.execute(db);
  await sql`alter table messages add column kind text not null default 'message'`.execute(db);
  await sql`alter table messages add column send_style text`.execute(db);
  /** the revision of the message's own stream the row reflects (`revision` is its conversation's, at acceptance) */
  await sql`alter table messages add column message_revision bigint not null default -1`.execute(db);

  await sql`
    create table message_reactions (
      reaction_id text primary key,
      account_id text not null,
      message_id text not null,
      reaction_type text not null,
      from_number text not null,
      direction text not null,
      created_at timestamptz not null
    )`.execute(db);
  await sql`create index message_reactions_message_idx on message_reactions (message_id, created_at)`.execute(db);

  await sql`
    create table message_carrier_ids (
      carrier_message_id text primary key,
      account_id text not null,
      message_id text not null
    )`.execute(db);

  await sql`
    create table opt_outs (
      account_id text not null,
      participant text not null,
      number_id text not null,
      keyword text not null,
      opted_out_at timestamptz not null,
      primary key (account_id, participant, number_id)
    )`.execute(db);

  await sql`
    create table message_stats_daily (
      account_id text not null,
      day date not null,
      number_id text not null,
      agent_id text not null,
      direction text not null,
      messages bigint not null default 0,
      segments bigint not null default 0,
      primary key (account_id, day, number_id, agent_id, direction)
    )`.execute(db);

  await sql`create index phone_numbers_phone_idx on phone_numbers (phone_number) where status = 'active'`.execute(db);

  await sql`
    create table idempotency_keys (
      account_id text not null,
      key text not null,
      request_hash text not null,
      status integer,
      answer jsonb,
      created_at timestamptz not null,
      primary key (account_id, key)
    )`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * Analytics read models (docs/analytics.md): one row per message, call, agent turn, webhook delivery, attempt and
 * charge, each carrying the account, its UTC day and what the counting rule needs. Every row is written by one
 * guarded statement per event, so a replay changes nothing and a rebuild equals the live tables. The daily
 * counters they replace (`usage_daily` of usage_v1, `message_stats_daily` of message_stats_v1) counted by
 * increments and by two different rules; they are dropped with their checkpoints.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table analytics_messages (
      message_id text primary key,
      account_id text not null,
      day date not null,
      at timestamptz not null,
      number_id text not null,
      agent_id text,
      direction text not null,
      channel text not null,
      counted boolean not null,
      segments integer not null,
      status text not null,
      failure_category text,
      revision bigint not null
    )`.execute(db);
  await sql`create index analytics_messages_day_idx on analytics_messages (account_id, day)`.execute(db);
  await sql`create index analytics_messages_number_idx on analytics_messages (account_id, number_id, day)`.execute(db);

  await sql`
    create table analytics_calls (
      call_id text primary key,
      account_id text not null,
      day date not null,
      started_at timestamptz not null,
      number_id text,
      agent_id text,
      direction text not null,
      status text not null,
      reason text,
      duration_seconds integer not null,
      revision bigint not null
    )`.execute(db);
  await sql`create index analytics_calls_day_idx on analytics_calls (account_id, day)`.execute(db);
  await sql`create index analytics_calls_agent_idx on analytics_calls (account_id, agent_id, started_at)`.execute(db);

  await sql`
    create table analytics_call_turns (
      call_id text not null,
      turn_id text not null,
      account_id text not null,
      agent_id text,
      day date not null,
      at timestamptz not null,
      request_ms double precision,
      first_byte_ms double precision,
      speech_start_ms double precision,
      total_ms double precision,
      primary key (call_id, turn_id)
    )`.execute(db);
  await sql`create index analytics_call_turns_day_idx on analytics_call_turns (account_id, day)`.execute(db);

  await sql`
    create table analytics_webhook_deliveries (
      delivery_id text primary key,
      account_id text not null,
      webhook_id text not null,
      day date not null,
      created_at timestamptz not null,
      event_type text not null,
      test boolean not null,
      status text not null,
      attempts integer not null,
      revision bigint not null
    )`.execute(db);
  await sql`create index analytics_webhook_deliveries_day_idx on analytics_webhook_deliveries (account_id, day)`.execute(db);

  await sql`
    create table analytics_webhook_attempts (
      delivery_id text not null,
      attempt integer not null,
      account_id text not null,
      webhook_id text not null,
      day date not null,
      attempted_at timestamptz not null,
      ok boolean not null,
      http_status integer,
      duration_ms integer not null,
      primary key (delivery_id, attempt)
    )`.execute(db);
  await sql`create index analytics_webhook_attempts_day_idx on analytics_webhook_attempts (account_id, day)`.execute(db);

  await sql`
    create table analytics_charges (
      charge_id text primary key,
      account_id text not null,
      day date not null,
      at timestamptz not null,
      kind text not null,
      amount_micros bigint not null,
      quantity integer not null
    )`.execute(db);
  await sql`create index analytics_charges_day_idx on analytics_charges (account_id, day)`.execute(db);

  await sql`drop table if exists usage_daily`.execute(db);
  await sql`drop table if exists message_stats_daily`.execute(db);
  await sql`delete from projection_checkpoints where name in ('usage_v1', 'message_stats_v1')`.execute(db);
  await sql`delete from worker_leases where name in ('usage_v1', 'message_stats_v1')`.execute(db);
}

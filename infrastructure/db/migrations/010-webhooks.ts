import { type Kysely, sql } from 'kysely';

/**
 * Webhooks: configurations (one row per scope: the account's master, or one agent's own), the delivery log
 * (one row per delivery, one per attempt) and the retry timeline (one row per pending delivery with the
 * attempt due next and its claim lease). Every row carries `account_id`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table webhooks (
      scope_key text primary key,
      webhook_id text not null,
      account_id text not null,
      agent_id text,
      url text not null,
      secret text not null,
      status text not null,
      context_limit integer not null,
      timeout_seconds integer not null,
      consecutive_failures integer not null,
      created_position text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz,
      revision bigint not null
    )`.execute(db);
  await sql`create index webhooks_account_idx on webhooks (account_id, agent_id)`.execute(db);
  await sql`create index webhooks_webhook_id_idx on webhooks (webhook_id)`.execute(db);

  await sql`
    create table webhook_deliveries (
      delivery_id text primary key,
      account_id text not null,
      webhook_id text not null,
      webhook_agent_id text,
      agent_id text,
      event_type text not null,
      channel text,
      message_id text,
      source_event_id text,
      test boolean not null,
      status text not null,
      http_status integer,
      error_message text,
      response_body text,
      attempt_count integer not null,
      last_attempt_at timestamptz,
      next_retry_at timestamptz,
      created_at timestamptz not null,
      finished_at timestamptz,
      revision bigint not null
    )`.execute(db);
  await sql`create index webhook_deliveries_account_idx on webhook_deliveries (account_id, created_at desc, delivery_id desc)`.execute(db);
  await sql`create index webhook_deliveries_agent_idx on webhook_deliveries (account_id, webhook_agent_id, created_at desc)`.execute(db);

  await sql`
    create table webhook_delivery_attempts (
      delivery_id text not null,
      attempt integer not null,
      account_id text not null,
      status text not null,
      http_status integer,
      error_message text,
      response_body text,
      duration_ms integer not null,
      attempted_at timestamptz not null,
      next_retry_at timestamptz,
      primary key (delivery_id, attempt)
    )`.execute(db);

  // the retry timeline; claimed_by/claimed_until are written by delivery workers, everything else by the projector
  await sql`
    create table webhook_due_attempts (
      delivery_id text primary key,
      account_id text not null,
      attempt integer not null,
      due_at timestamptz not null,
      claimed_by text,
      claimed_until timestamptz,
      revision bigint not null
    )`.execute(db);
  await sql`create index webhook_due_attempts_due_idx on webhook_due_attempts (due_at)`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * First read models. Every row carries `account_id` and the stream revision it reflects (`revision`), so a
 * replayed event is a no-op. Checkpoints live beside the rows and are written in the same transaction.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table projection_checkpoints (name text primary key, checkpoint text not null, updated_at timestamptz not null default now())`.execute(
    db,
  );
  await sql`
    create table accounts (
      account_id text primary key,
      parent_account_id text,
      name text not null,
      status text not null,
      balance_micros bigint not null,
      number_limit integer not null,
      created_at timestamptz not null,
      revision bigint not null
    )`.execute(db);
  await sql`create index accounts_parent_idx on accounts (parent_account_id)`.execute(db);
  await sql`
    create table api_keys (
      key_id text primary key,
      account_id text not null,
      name text not null,
      prefix text not null,
      key_hash text not null unique,
      created_at timestamptz not null,
      revoked_at timestamptz
    )`.execute(db);
  await sql`create index api_keys_account_idx on api_keys (account_id)`.execute(db);
  await sql`
    create table agents (
      agent_id text primary key,
      account_id text not null,
      name text not null,
      config jsonb not null,
      created_at timestamptz not null,
      deleted_at timestamptz,
      revision bigint not null
    )`.execute(db);
  await sql`create index agents_account_idx on agents (account_id, created_at, agent_id)`.execute(db);
}

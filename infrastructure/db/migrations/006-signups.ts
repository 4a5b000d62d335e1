import { type Kysely, sql } from 'kysely';

/** Self-service sign-up: the owner of an account, and the sign-up processes (for throttles and recovery). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table accounts add column owner_email text`.execute(db);
  await sql`alter table accounts add column project_id text`.execute(db);
  await sql`
    create table signups (
      verification_id text primary key,
      email text not null,
      client_address text,
      status text not null,
      account_id text,
      requested_at timestamptz not null,
      updated_at timestamptz not null,
      revision bigint not null
    )`.execute(db);
  await sql`create index signups_email_idx on signups (email, requested_at)`.execute(db);
  await sql`create index signups_client_idx on signups (client_address, requested_at)`.execute(db);
  await sql`create index signups_status_idx on signups (status)`.execute(db);
  await sql`
    create table sandbox_outbox (
      message_id text primary key,
      to_address text not null,
      subject text not null,
      body text not null,
      sent_at timestamptz not null
    )`.execute(db);
  await sql`create index sandbox_outbox_to_idx on sandbox_outbox (to_address, sent_at)`.execute(db);
}

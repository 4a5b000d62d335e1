import { type Kysely, sql } from 'kysely';

/**
 * Live-call bookkeeping that is not a projection (docs/calls.md#the-live-session): which process holds each live
 * call and until when (`call_leases`, so another process's sweeper ends the calls of a process that died), and
 * web calls' single-use access tokens, stored as SHA-256 hashes (`web_call_tokens`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table call_leases (
    call_id text primary key,
    account_id text not null,
    host_id text not null,
    lease_until timestamptz not null
  )`.execute(db);
  await sql`create index call_leases_until on call_leases (lease_until)`.execute(db);
  await sql`create table web_call_tokens (
    token_hash text primary key,
    call_id text not null,
    account_id text not null,
    expires_at timestamptz not null,
    redeemed_at timestamptz
  )`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/** US A2P 10DLC registrations: one row per account, the sandbox review's queue (docs/registration.md). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table registrations (
      account_id text primary key,
      status text not null,
      submission integer not null,
      registration_type text not null,
      submitted_at timestamptz not null,
      decided_at timestamptz,
      revision bigint not null
    )`.execute(db);
  await sql`create index registrations_pending_idx on registrations (submitted_at) where status = 'pending'`.execute(db);
}

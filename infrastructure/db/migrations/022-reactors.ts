import { type Kysely, sql } from 'kysely';

/**
 * Reactors (process managers): their checkpoints, and the lease that lets exactly one process drive each
 * reactor at a time when several worker processes run.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table reactor_checkpoints (name text primary key, checkpoint text not null, updated_at timestamptz not null default now())`.execute(
    db,
  );
  await sql`create table worker_leases (name text primary key, holder text not null, expires_at timestamptz not null)`.execute(db);
}

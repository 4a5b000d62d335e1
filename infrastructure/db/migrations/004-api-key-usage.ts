import { type Kysely, sql } from 'kysely';

/**
 * When each key was last used. Operational data, written by the auth middleware at most once a minute per
 * key; not event-sourced (it would add an event per minute per key for a convenience field) and not owned by
 * a projector, so rebuilding `accounts_v1` leaves it alone.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table api_key_usage (key_id text primary key, last_used_at timestamptz not null)`.execute(db);
}

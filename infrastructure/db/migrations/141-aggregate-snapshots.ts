import { type Kysely, sql } from 'kysely';

/** Snapshots of long streams (docs/event-store.md#snapshots): one row per stream, the newest kept. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table aggregate_snapshots (
      stream_name text primary key,
      revision bigint not null,
      version int not null,
      state jsonb not null,
      taken_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists aggregate_snapshots`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/** The PostgreSQL event store: the append-only log plus one row per stream holding its revision. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table events (
      global_position bigint generated always as identity primary key,
      transaction_id xid8 not null,
      event_id uuid not null unique,
      stream_name text not null,
      stream_category text not null,
      stream_revision bigint not null,
      event_type text not null,
      data jsonb not null,
      metadata jsonb not null,
      created_at timestamptz not null,
      unique (stream_name, stream_revision)
    )`.execute(db);
  await sql`create index events_visibility_idx on events (transaction_id, global_position)`.execute(db);
  await sql`create index events_type_idx on events (event_type, transaction_id, global_position)`.execute(db);
  await sql`create index events_category_idx on events (stream_category, transaction_id, global_position)`.execute(db);
  await sql`create table streams (stream_name text primary key, revision bigint not null)`.execute(db);
}

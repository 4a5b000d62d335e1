import { type Kysely, sql } from 'kysely';

/**
 * Work set aside because handling it failed for a reason retrying cannot cure (docs/operations.md#isolated-work):
 * one row per reactor event or webhook attempt, saying why, so that one poisoned item never stops the rest.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table isolated_work (
      consumer text not null,
      item text not null,
      stream text,
      event_type text,
      checkpoint text,
      account_id text,
      error text not null,
      tries int not null,
      isolated_at timestamptz not null default now(),
      primary key (consumer, item)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists isolated_work`.execute(db);
}

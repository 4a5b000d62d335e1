import { type Kysely, sql } from 'kysely';

/**
 * The sandbox clock's offset (docs/sandbox.md#sandbox-clock): one row, kept in the database so that a restart
 * keeps it and every process of the deployment (API, worker, CLI) follows it. Not a read model.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table sandbox_clock (
      id smallint primary key check (id = 1),
      offset_seconds bigint not null check (offset_seconds >= 0),
      updated_at timestamptz not null
    )`.execute(db);
}

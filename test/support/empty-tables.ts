import { type Kysely, sql } from 'kysely';

/**
 * Empties every table of the database's public schema but the migrations' own (read models, checkpoints, the PG
 * event store, the sandbox's): how a test installation starts, on a server database or on a PGlite of the pool.
 */
export async function emptyTables(db: Kysely<any>): Promise<void> {
  const rows = await sql<{ tablename: string }>`select tablename from pg_tables
    where schemaname = 'public' and tablename not like 'kysely_%'`.execute(db);
  if (rows.rows.length) await sql.raw(`truncate ${rows.rows.map((r) => `"${r.tablename}"`).join(', ')} restart identity`).execute(db);
}

import { type QueryExecutorProvider, sql } from 'kysely';

/** The PostgreSQL version a bench ran on (`16.4`), printed with its figures. */
export async function serverVersion(db: QueryExecutorProvider): Promise<string> {
  const r = await sql<{ v: string }>`select current_setting('server_version') as v`.execute(db);
  return r.rows[0]?.v.split(' ')[0] ?? '?';
}

/** The settings that decide what a commit costs (`fsync=on synchronous_commit=on`), printed with the figures. */
export async function durability(
  db: QueryExecutorProvider,
  settings: readonly string[] = ['fsync', 'synchronous_commit'],
): Promise<string> {
  const r = await sql<{ name: string; setting: string }>`
    select name, setting from pg_settings where name in (${sql.join(settings)}) order by name`.execute(db);
  return r.rows.map((x) => `${x.name}=${x.setting}`).join(' ');
}

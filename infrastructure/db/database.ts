import { Kysely, PostgresDialect, sql, type Generated } from 'kysely';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PGliteDialect } from 'kysely-pglite-dialect';
import type { ReadDb } from '../../projections/shared/read-db.js';

/** Tables owned by the PostgreSQL event store (not read models). */
export interface EventsTable {
  global_position: Generated<string | bigint>;
  transaction_id: string;
  event_id: string;
  stream_name: string;
  stream_category: string;
  stream_revision: string | bigint;
  event_type: string;
  data: unknown;
  metadata: unknown;
  created_at: Date | string;
}
export interface StreamsTable {
  stream_name: string;
  revision: string | bigint;
}
export interface EventDb {
  events: EventsTable;
  streams: StreamsTable;
}
export type Db = ReadDb & EventDb;

// int8 and numeric come back from `pg` as strings by default; keep them as strings and convert with
// BigInt/Number where used, so nothing silently loses precision.
export type DatabaseHandle = Readonly<{ db: Kysely<Db>; kind: 'pglite' | 'postgres'; close: () => Promise<void> }>;

export async function openDatabase(o: { databaseUrl?: string | undefined; dataDir?: string | undefined; poolSize?: number }): Promise<DatabaseHandle> {
  if (o.databaseUrl) {
    const pool = new pg.Pool({ connectionString: o.databaseUrl, max: o.poolSize ?? 10 });
    const db = new Kysely<Db>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  // PGlite: embedded PostgreSQL in WebAssembly; `memory://` when no data directory is given.
  const client = o.dataDir ? new PGlite(o.dataDir) : new PGlite();
  await client.waitReady;
  const db = new Kysely<Db>({ dialect: new PGliteDialect(client) });
  return { db, kind: 'pglite', close: () => db.destroy() };
}

export async function ping(db: Kysely<Db>): Promise<void> {
  await sql`select 1`.execute(db);
}

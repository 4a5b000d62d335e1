import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Generated, Kysely, type LogEvent, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { BatchPipeline } from '../../projections/shared/pipelined-batch.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { countStatement } from '../observability/metrics.js';
import { inlineRunner, PgliteDialect, type PgliteRunner } from './pglite-driver.js';
import { openPglite } from './pglite-run.js';
import { PgliteThread } from './pglite-thread.js';
import { serverPipeline } from './server-pipeline.js';
import { PoolStatements, preparingPool } from './server-prepared.js';

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
export interface AggregateSnapshotsTable {
  stream_name: string;
  revision: string | bigint;
  version: number;
  state: unknown;
  taken_at: Generated<Date | string>;
}
export type EventDb = {
  events: EventsTable;
  streams: StreamsTable;
  aggregate_snapshots: AggregateSnapshotsTable;
};
export type Db = ReadDb & EventDb;

// int8 and numeric come back from `pg` as strings by default; keep them as strings and convert with
// BigInt/Number where used, so nothing silently loses precision.
export type DatabaseHandle = Readonly<{
  db: Kysely<Db>;
  /** the same connection, seen through the read-side tables only (the projectors', queries' and sandbox kit's) */
  readDb: Kysely<ReadDb>;
  kind: 'pglite' | 'postgres';
  close: () => Promise<void>;
  /** PGlite only: its data directory as a tarball (a test's migrated template) */
  dump?: () => Promise<Blob | File>;
  /** statements as one transaction in one message (docs/event-store.md#pipelined-batches) */
  pipeline: BatchPipeline;
  /**
   * the read side for reads awaited together (docs/event-store.md#reads-together): embedded, the statements sent
   * through it in one turn of the event loop go to PGlite as one message; on a server, the pool's connections as `readDb`
   */
  readTogether: Kysely<ReadDb>;
}>;

export async function openDatabase(o: {
  databaseUrl?: string | undefined;
  dataDir?: string | undefined;
  poolSize?: number;
  /** on a server: statements prepared once per connection (docs/event-store.md#prepared-statements); default true */
  prepared?: boolean;
  /** a pooled connection was lost (server restart, failover, terminated backend); the pool replaces it */
  onConnectionError?: (err: Error) => void;
  /** in memory only: start from this dump of a PGlite data directory (tests start from one already migrated) */
  image?: Blob | File;
  /** PGlite only: run it on a worker thread of its own (docs/event-store.md#pglite-on-its-own-thread) */
  thread?: boolean;
}): Promise<DatabaseHandle> {
  if (o.databaseUrl) {
    // waiting longer than this for a connection answers 503 instead of hanging while the server is away
    const pool = new pg.Pool({ connectionString: o.databaseUrl, max: o.poolSize ?? 10, connectionTimeoutMillis: 10_000 });
    // Without these listeners a lost connection is an unhandled 'error' event, which ends the process. The
    // pool emits for idle clients; a checked-out client emits on itself between queries. A broken client is
    // not queryable, so the pool drops it on release and the next query connects afresh.
    const lost = (err: Error) => o.onConnectionError?.(err);
    pool.on('error', lost);
    pool.on('connect', (client) => {
      client.on('error', lost);
    });
    // statements prepared once per connection (docs/event-store.md#prepared-statements)
    const prepared = new PoolStatements(o.prepared ?? true);
    const readDb = new Kysely<ReadDb>({ dialect: new PostgresDialect({ pool: preparingPool(pool, prepared) }), log: logStatement });
    const db = readDb.withTables<EventDb>();
    return { db, readDb, readTogether: readDb, kind: 'postgres', pipeline: serverPipeline(pool, prepared), close: () => db.destroy() };
  }
  // PGlite: embedded PostgreSQL in WebAssembly; in memory when no data directory (or `memory://`) is given.
  const onDisk = o.dataDir !== undefined && !o.dataDir.startsWith('memory://');
  const unlock = onDisk ? lockDataDir(o.dataDir!) : () => undefined;
  try {
    const runner = await openPgliteRunner({ dataDir: o.dataDir, image: o.image, thread: o.thread });
    return pgliteHandle(runner, async () => {
      await runner.close();
      unlock();
    });
  } catch (err) {
    unlock();
    throw err;
  }
}

/**
 * PGlite opened and ready, in this thread or on its own (`thread`): in memory (from `image` if given) unless
 * `dataDir` names a directory on disk, whose leases it frees. The caller owns it (closes it).
 */
export async function openPgliteRunner(o: {
  dataDir?: string | undefined;
  image?: Blob | File | undefined;
  thread?: boolean | undefined;
}): Promise<PgliteRunner> {
  const onDisk = o.dataDir !== undefined && !o.dataDir.startsWith('memory://');
  if (o.thread) {
    const thread = new PgliteThread({
      ...(onDisk ? { dataDir: o.dataDir! } : o.image ? { image: o.image } : {}),
      ...(onDisk ? { freeLeases: FREE_LEASES } : {}),
    });
    await thread.ready.catch(async (err: unknown) => {
      await thread.close();
      throw err;
    });
    return thread;
  }
  const client = await openPglite(onDisk ? { dataDir: o.dataDir! } : o.image ? { image: o.image } : {});
  if (onDisk) await client.exec(FREE_LEASES);
  return inlineRunner(client);
}

/**
 * The database handle over an open PGlite runner: one driver, seen two ways (the read side's tables, and those plus
 * the event store's). Closing it ends its query builders, then runs `close`, the opener's: `openDatabase` closes the
 * runner; the test apps' pool empties it and keeps it for the next one (test/support/pglite-pool.ts).
 */
export function pgliteHandle(runner: PgliteRunner, close: () => Promise<void>): DatabaseHandle {
  const dialect = new PgliteDialect(runner);
  const readDb = new Kysely<ReadDb>({ dialect, log: logStatement });
  const db = readDb.withTables<EventDb>();
  return {
    db,
    readDb,
    readTogether: new Kysely<ReadDb>({ dialect: dialect.together, log: logStatement }),
    kind: 'pglite',
    pipeline: dialect.pipeline,
    dump: () => runner.dump(),
    close: async () => {
      await db.destroy();
      await close();
    },
  };
}

/**
 * The directory has one owner process at a time (the lock below), so a lease stored in it was held by a previous
 * owner that is gone: free them, so projectors and reactors resume at once, not one lease TTL later.
 */
const FREE_LEASES = `do $$ begin if to_regclass('public.worker_leases') is not null then delete from worker_leases; end if; end $$`;

/**
 * PGlite is single-process: two processes on one data directory would corrupt it. A lock file holding the
 * owner's pid refuses a second opener while the first is alive (a stale lock from a crash is taken over).
 */
function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, '.agent-platform.lock');
  try {
    const pid = Number(readFileSync(file, 'utf8'));
    if (pid && pid !== process.pid && isAlive(pid)) {
      throw new Error(`data directory ${dir} is in use by process ${pid}; stop it first (or use DATABASE_URL for several processes)`);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  writeFileSync(file, String(process.pid));
  return () => {
    try {
      if (readFileSync(file, 'utf8') === String(process.pid)) rmSync(file);
    } catch {
      /* already gone */
    }
  };
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The query builder's log: each statement it ran, counted (docs/operations.md#what-an-operation-costs). */
const logStatement = (e: LogEvent): void => countStatement(e.query.sql, e.queryDurationMillis);

export async function ping(db: Kysely<Db>): Promise<void> {
  await sql`select 1`.execute(db);
}

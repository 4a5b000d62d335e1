import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Config, loadConfig } from '../../infrastructure/config/config.js';
import type { Overrides } from '../../infrastructure/container.js';
import { openDatabase } from '../../infrastructure/db/database.js';
import { migrateToLatest } from '../../infrastructure/db/migrate.js';
import { createLogger } from '../../infrastructure/logger.js';
import { createRuntime, listen, type Runtime } from '../../infrastructure/runtime.js';
import { emptyTables } from './empty-tables.js';
import { resetTestEventStore } from './esdb-reset.js';
import { lendPglite } from './pglite-pool.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
/** keys sign-up code hashes and webhook secret sealing; fixed, so that every runtime of a test opens what another sealed */
export const SECRETS_KEY = 'test-secrets-key-0123456789abcdefghijklmnop';

/**
 * A PGlite data directory with every migration applied, made once per test process: a test app starts from a
 * copy of it in a couple of seconds, where a fresh PGlite plus all the migrations takes several times that.
 */
let image: Promise<Blob | File> | null = null;
export function migratedImage(): Promise<Blob | File> {
  image ??= (async () => {
    const h = await openDatabase({});
    try {
      await migrateToLatest(h.db as never);
      return await h.dump!();
    } finally {
      await h.close();
    }
  })();
  return image;
}

/** Empties every table of a PostgreSQL server database (read models, checkpoints and the PG event store). */
export async function resetServerDatabase(url: string): Promise<void> {
  const h = await openDatabase({ databaseUrl: url, poolSize: 1 });
  try {
    await migrateToLatest(h.db as never);
    await emptyTables(h.db);
  } finally {
    await h.close();
  }
  await resetTestEventStore();
}

export type TestApp = Readonly<{
  url: string;
  rt: Runtime;
  /** fetch relative to the server, JSON in and out */
  call: (
    method: string,
    path: string,
    o?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ) => Promise<{ status: number; body: any; headers: Headers }>;
  /** a new account through the admin API: its id and key */
  newAccount: (name?: string, parentAccountId?: string) => Promise<{ accountId: string; apiKey: string }>;
  close: () => Promise<void>;
}>;

/**
 * A real server on a free port over a real database: PGlite in memory, or DATABASE_URL (emptied first);
 * events in EventStoreDB when EVENTSTORE_URL is set. Configuration goes through the same parser as `npm start`.
 */
export async function startTestApp(env: Record<string, string> = {}, overrides: Overrides = {}): Promise<TestApp> {
  const cfg: Config = loadConfig({
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    ADMIN_TOKEN,
    SECRETS_KEY,
    DEV_ACCOUNT: 'false',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    ...(process.env.EVENTSTORE_URL ? { EVENTSTORE_URL: process.env.EVENTSTORE_URL } : {}),
    // embedded, PGlite on a thread of its own as the platform runs it, unless PGLITE_THREAD=false (docs/testing.md)
    ...(process.env.PGLITE_THREAD ? { PGLITE_THREAD: process.env.PGLITE_THREAD } : {}),
    ...env,
  });
  if (cfg.DATABASE_URL) {
    // emptying the database pulls it from under any app still open on it (a suite whose after hook failed):
    // close those first, so that none of their workers keeps polling the tables of the tests that follow
    for (const open of [...openServerApps]) await open.close().catch(() => undefined);
    await resetServerDatabase(cfg.DATABASE_URL);
  }
  const embedded = !cfg.DATABASE_URL && cfg.DATA_DIR === 'memory://';
  // embedded, a PGlite of the pool (test/support/pglite-pool.ts); one with a capability of a test's own gets its tables
  const pooled = embedded && !overrides.capabilities && !overrides.databaseImage && !overrides.database;
  const database = pooled ? await lendPglite(cfg.PGLITE_THREAD, await migratedImage()) : undefined;
  const rt = await createRuntime(cfg, createLogger(cfg.LOG_LEVEL), {
    ...(database ? { database } : embedded ? { databaseImage: await migratedImage() } : {}),
    ...overrides,
  }).catch(async (err: unknown) => {
    await database?.close();
    throw err;
  });
  const server: Server = await listen(rt.app, 0, '127.0.0.1', rt.upgrades);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const call: TestApp['call'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let body: string | undefined;
    if (o.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    }
    const res = await fetch(`${url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };

  const newAccount: TestApp['newAccount'] = async (name = 'Test account', parentAccountId) => {
    const r = await call('POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { name, ...(parentAccountId ? { parentAccountId } : {}) } });
    if (r.status !== 200) throw new Error(`admin create account: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { accountId: string; apiKey: string };
  };

  const app: TestApp = {
    url,
    rt,
    call,
    newAccount,
    close: async () => {
      if (!server.listening) return;
      openServerApps.delete(app);
      server.closeAllConnections();
      await Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), rt.upgrades.drain()]);
      await rt.close();
    },
  };
  if (cfg.DATABASE_URL) openServerApps.add(app);
  return app;
}

/** Test apps open on the server database (DATABASE_URL), which each start empties. */
const openServerApps = new Set<TestApp>();

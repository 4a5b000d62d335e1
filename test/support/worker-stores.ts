import pg from 'pg';

/**
 * The stores of one mocha worker process (.mocharc.cjs runs the test files in worker processes; docs/testing.md#
 * a-database-per-worker). Embedded, every test app has a PGlite of its own and there is nothing to do. With
 * EventStoreDB each worker takes a server of its own from EVENTSTORE_URLS (the test server is emptied by every test
 * app, a real one cannot be emptied at all). With the PostgreSQL event store each worker takes a PostgreSQL cluster
 * of its own from DATABASE_URLS: its readers wait behind every transaction open on their cluster, so workers would
 * hold back each other's events even on two databases of one cluster. Beside EventStoreDB, without DATABASE_URLS,
 * the read models go to a database of the worker's own on the DATABASE_URL server, named after the given one with
 * `_w<worker>` appended and made by `makeWorkerDatabase` (a root hook) when missing.
 *
 * Evaluated by the root hooks (a --require of .mocharc.cjs) before any test file: every test, and every process a
 * test starts, sees the worker's own DATABASE_URL and EVENTSTORE_URL. Outside a worker (`--no-parallel`) the given
 * ones are used as they are, or the first of each list. No top-level await here: the root hooks would have to load
 * as an ES module, apart from the test files mocha requires, and every module they share would load twice.
 */
const worker = process.env.MOCHA_WORKER_ID;
const listed = (name: string) => (process.env[name] ?? '').split(/\s+/).filter(Boolean);
const servers = listed('EVENTSTORE_URLS');
const clusters = listed('DATABASE_URLS');
/** the database the given DATABASE_URL names, in which the worker's own is made; null outside a worker, or with a cluster of its own */
const given = worker !== undefined && !clusters.length && process.env.DATABASE_URL ? process.env.DATABASE_URL : null;
if (worker === undefined) {
  if (servers.length && !process.env.EVENTSTORE_URL) process.env.EVENTSTORE_URL = servers[0];
  if (clusters.length && !process.env.DATABASE_URL) process.env.DATABASE_URL = clusters[0];
} else {
  const n = Number(worker);
  // .mocharc.cjs starts no more workers than there are servers; a worker restarted after a crash gets the next id
  if (servers.length) process.env.EVENTSTORE_URL = servers[n % servers.length];
  if (clusters.length) process.env.DATABASE_URL = clusters[n % clusters.length];
  else if (given) {
    const mine = new URL(given);
    mine.pathname = `/${encodeURIComponent(`${decodeURIComponent(mine.pathname.slice(1)) || 'postgres'}_w${n}`)}`;
    process.env.DATABASE_URL = mine.toString();
  }
}

let made: Promise<void> | null = null;
/** Makes the worker's own database (empty) if the server has none by its name; once per process. */
export function makeWorkerDatabase(): Promise<void> {
  made ??= (async () => {
    if (!given) return;
    const name = decodeURIComponent(new URL(process.env.DATABASE_URL!).pathname.slice(1));
    const client = new pg.Client({ connectionString: given });
    await client.connect();
    try {
      const found = await client.query('select 1 from pg_database where datname = $1', [name]);
      if (!found.rowCount) await client.query(`create database ${client.escapeIdentifier(name)}`);
    } finally {
      await client.end();
    }
  })();
  return made;
}

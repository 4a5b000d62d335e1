import pg from 'pg';

/**
 * The stores of one mocha worker process (.mocharc.cjs runs the test files in worker processes; docs/testing.md#
 * a-database-per-worker). Embedded, every test app has a PGlite of its own and there is nothing to do. With
 * EventStoreDB each worker takes a server of its own from EVENTSTORE_URLS (the test server is emptied by every test
 * app, a real one cannot be emptied at all), and for the read models a database of its own on the DATABASE_URL
 * server, named after the given one with `_w<worker>` appended and made by `makeWorkerDatabase` (a root hook) when
 * missing. With the PostgreSQL event store on a server, .mocharc.cjs starts no workers: its readers share the
 * cluster's horizon, so workers would hold back each other's events even on two databases.
 *
 * Evaluated by the root hooks (a --require of .mocharc.cjs) before any test file: every test, and every process a
 * test starts, sees the worker's own DATABASE_URL and EVENTSTORE_URL. Outside a worker (`--no-parallel`) the given
 * ones are used as they are. No top-level await here: the root hooks would have to load as an ES module, apart from
 * the test files mocha requires, and every module they share would load twice.
 */
const worker = process.env.MOCHA_WORKER_ID;
const servers = (process.env.EVENTSTORE_URLS ?? '').split(/\s+/).filter(Boolean);
/** the database the given DATABASE_URL names, in which the worker's own is made; null outside a worker */
const given = worker !== undefined && process.env.DATABASE_URL ? process.env.DATABASE_URL : null;
if (worker === undefined) {
  if (servers.length && !process.env.EVENTSTORE_URL) process.env.EVENTSTORE_URL = servers[0];
} else {
  const n = Number(worker);
  // .mocharc.cjs starts no more workers than there are servers; a worker restarted after a crash gets the next id
  if (servers.length) process.env.EVENTSTORE_URL = servers[n % servers.length];
  if (given) {
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

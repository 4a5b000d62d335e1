import pg from 'pg';

/**
 * The stores of one mocha worker process (.mocharc.cjs runs the test files in worker processes; docs/testing.md#
 * running-the-tests). Embedded, every test app has a PGlite of its own and there is nothing to do. On a PostgreSQL
 * server every test app empties the database, so two workers on one database would empty each other's: each worker
 * takes a database of its own on the same server, named after the given one with `_w<worker>` appended and made
 * here when missing. An EventStoreDB server cannot be shared either (the test server is emptied the same way, a
 * real one not at all), so with EventStoreDB each worker takes its own server from EVENTSTORE_URLS.
 *
 * Loaded by the root hooks (a --require of .mocharc.cjs), which a worker evaluates before any test file: every test,
 * and every process a test starts, sees the worker's own DATABASE_URL and EVENTSTORE_URL. Outside a worker (one file
 * at a time, `--jobs 1`) the given ones are used as they are.
 */
const worker = process.env.MOCHA_WORKER_ID;
const servers = (process.env.EVENTSTORE_URLS ?? '').split(/\s+/).filter(Boolean);
if (worker === undefined) {
  if (servers.length && !process.env.EVENTSTORE_URL) process.env.EVENTSTORE_URL = servers[0];
} else {
  const n = Number(worker);
  // .mocharc.cjs starts no more workers than there are servers; a worker restarted after a crash gets the next id
  if (servers.length) process.env.EVENTSTORE_URL = servers[n % servers.length];
  if (process.env.DATABASE_URL) process.env.DATABASE_URL = await workerDatabase(process.env.DATABASE_URL, n);
}

/** The URL of the worker's own database beside the one `url` names, made (empty) if the server has none by that name. */
async function workerDatabase(url: string, n: number): Promise<string> {
  const given = new URL(url);
  const name = `${decodeURIComponent(given.pathname.slice(1)) || 'postgres'}_w${n}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!found.rowCount) await client.query(`create database ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  const mine = new URL(url);
  mine.pathname = `/${encodeURIComponent(name)}`;
  return mine.toString();
}

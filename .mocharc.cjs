// Test files run in worker processes, two at once (MOCHA_JOBS). Embedded (no DATABASE_URL) every test app has its own
// in-memory PGlite. On a PostgreSQL server every test app empties its database, so each worker takes a database of
// its own on that server; with EventStoreDB each worker needs a server of its own (EVENTSTORE_URLS), and with only
// EVENTSTORE_URL the files run one at a time (test/support/worker-stores.ts, docs/testing.md#running-the-tests).
const esdbServers = (process.env.EVENTSTORE_URLS ?? '').split(/\s+/).filter(Boolean);
const wanted = Number(process.env.MOCHA_JOBS ?? 2);
const jobs = process.env.EVENTSTORE_URL || esdbServers.length ? Math.min(wanted, esdbServers.length || 1) : wanted;

module.exports = {
  'node-option': ['import=tsx', 'no-experimental-require-module'],
  extension: ['ts'],
  require: ['test/support/root-hooks.ts'],
  timeout: 20000,
  exit: true,
  ...(jobs > 1 ? { parallel: true, jobs } : {}),
};

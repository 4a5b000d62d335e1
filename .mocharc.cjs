// Test files run in worker processes, two at once (MOCHA_JOBS), where each worker has stores of its own
// (test/support/worker-stores.ts, docs/testing.md#a-database-per-worker):
// - embedded (no DATABASE_URL): every test app has its own in-memory PGlite;
// - with EventStoreDB (EVENTSTORE_URLS, a server per worker): each worker makes a database of its own on the
//   DATABASE_URL server for its read models. With EVENTSTORE_URL alone the files run one at a time.
// With the PostgreSQL event store on a server (DATABASE_URL alone) the files run one at a time: its readers wait
// behind every transaction open anywhere on the cluster (docs/event-store.md), so workers on one server would hold
// back each other's events.
const esdbServers = (process.env.EVENTSTORE_URLS ?? '').split(/\s+/).filter(Boolean);
const wanted = Number(process.env.MOCHA_JOBS ?? 2);
const jobs =
  process.env.EVENTSTORE_URL || esdbServers.length ? Math.min(wanted, esdbServers.length || 1) : process.env.DATABASE_URL ? 1 : wanted;

module.exports = {
  'node-option': ['import=tsx', 'no-experimental-require-module'],
  extension: ['ts'],
  require: ['test/support/root-hooks.ts'],
  timeout: 20000,
  exit: true,
  ...(jobs > 1 ? { parallel: true, jobs } : {}),
};

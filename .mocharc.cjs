// Test files run in worker processes, two at once (MOCHA_JOBS), where each worker has stores of its own
// (test/support/worker-stores.ts, docs/testing.md#a-database-per-worker):
// - embedded (no DATABASE_URL): every test app has its own in-memory PGlite;
// - with EventStoreDB (EVENTSTORE_URLS, a server per worker): each worker makes a database of its own on the
//   DATABASE_URL server for its read models. With EVENTSTORE_URL alone the files run one at a time.
// - with the PostgreSQL event store (no EventStoreDB): a PostgreSQL cluster per worker (DATABASE_URLS). Its readers
//   wait behind every transaction open anywhere on their cluster (docs/event-store.md), so workers on one cluster
//   would hold back each other's events: with DATABASE_URL alone the files run one at a time.
// No more workers start than there are servers for them.
const listed = (name) => (process.env[name] ?? '').split(/\s+/).filter(Boolean);
const esdbServers = listed('EVENTSTORE_URLS');
const pgClusters = listed('DATABASE_URLS');
const wanted = Number(process.env.MOCHA_JOBS ?? 2);
const servers =
  process.env.EVENTSTORE_URL || esdbServers.length
    ? esdbServers.length || 1
    : process.env.DATABASE_URL || pgClusters.length
      ? pgClusters.length || 1
      : wanted;
const jobs = Math.min(wanted, servers);

module.exports = {
  'node-option': ['import=tsx', 'no-experimental-require-module'],
  extension: ['ts'],
  require: ['test/support/global-setup.ts', 'test/support/root-hooks.ts'],
  timeout: 20000,
  exit: true,
  ...(jobs > 1 ? { parallel: true, jobs } : {}),
};

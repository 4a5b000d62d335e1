// Embedded (no DATABASE_URL, no EVENTSTORE_URL) every test app has its own in-memory PGlite, so test files run
// in two worker processes at once. Against a server database they run one at a time: each test app empties it.
const embedded = !process.env.DATABASE_URL && !process.env.EVENTSTORE_URL;

module.exports = {
  'node-option': ['import=tsx', 'no-experimental-require-module'],
  extension: ['ts'],
  require: ['test/support/root-hooks.ts'],
  timeout: 20000,
  exit: true,
  ...(embedded ? { parallel: true, jobs: Number(process.env.MOCHA_JOBS ?? 2) } : {}),
};

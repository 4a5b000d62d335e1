import { migratedImage } from './http.js';
import { makeWorkerDatabase } from './worker-stores.js';

/**
 * Mocha root hooks (.mocharc.cjs): before the first test of a process, make the worker's own database on a server
 * (test/support/worker-stores.ts), or embedded the migrated PGlite image that every test app starts from
 * (test/support/http.ts), under a timeout of its own rather than the first suite's.
 */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(300_000);
    if (process.env.DATABASE_URL) await makeWorkerDatabase();
    else await migratedImage();
  },
};

import { sql } from 'kysely';
import { type DatabaseHandle, openPgliteRunner, pgliteHandle } from '../../infrastructure/db/database.js';
import type { PgliteRunner } from '../../infrastructure/db/pglite-driver.js';
import { emptyTables } from './empty-tables.js';

/**
 * In-memory PGlites lent to the embedded test apps of this process, kept between them (docs/testing.md#running-the-
 * tests). Opening one from the migrated image costs about a second of CPU, more than most tests; emptying one costs
 * a few milliseconds. A test app closing its database hands it back: its open transaction (if any) rolled back, its
 * prepared statements let go of, every table emptied as on a server (`truncate … restart identity`), and it waits
 * here for the next app of the same kind (in this thread, or on a thread of its own). The app that closed it cannot
 * reach it any more: its statements are refused from then on, so a late one never lands in the next test's tables.
 */
const idle = new Map<boolean, PgliteRunner[]>([
  [false, []],
  [true, []],
]);
/** at most this many wait per kind; a test rarely runs more apps at once */
const KEEP = 3;

export async function lendPglite(thread: boolean, image: Blob | File): Promise<DatabaseHandle> {
  const runner = idle.get(thread)!.pop() ?? (await openPgliteRunner({ image, thread }));
  let lent = true;
  const fenced: PgliteRunner = {
    run: (message) => (lent ? runner.run(message) : Promise.reject(new Error('this test app has closed its database'))),
    parsers: () => runner.parsers(),
    dump: () => runner.dump(),
    close: () => runner.close(),
  };
  return pgliteHandle(fenced, async () => {
    lent = false;
    const kept = idle.get(thread)!;
    if (kept.length >= KEEP || !(await emptied(runner))) return runner.close();
    kept.push(runner);
  });
}

/** Whether the database is back to its migrated, empty state (false: close it instead of keeping it). */
async function emptied(runner: PgliteRunner): Promise<boolean> {
  const h = pgliteHandle(runner, async () => undefined);
  try {
    await sql`rollback`.execute(h.db);
    await sql`deallocate all`.execute(h.db);
    await emptyTables(h.db);
    return true;
  } catch {
    return false;
  } finally {
    await h.close();
  }
}

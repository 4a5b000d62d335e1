import { compareCheckpoints } from '../../application/ports/event-store.port.js';
import { allProjectors } from '../../infrastructure/capabilities/index.js';
import type { Projector } from '../../projections/shared/projector.js';
import type { TestApp } from './http.js';
import { eventually } from './numbers.js';

/**
 * Waits until each projector (by default the lagging ones, whose read models, or some of their types, may be up to
 * PROJECTION_LAG_MS behind: docs/event-store.md#lagging-projectors) has a stored checkpoint at or past the last event of
 * its types in the log.
 */
export async function projectorsCaughtUp(
  app: TestApp,
  projectors: readonly Projector[] = allProjectors.filter((p) => p.lags || p.lagsOn),
): Promise<void> {
  const db = app.rt.database.db;
  for (const p of projectors) {
    const last = (await app.rt.store.readAll({ filter: { eventTypes: [...p.handles] }, maxCount: 100_000 })).at(-1);
    if (!last) continue;
    await eventually(async () => {
      const row = await db.selectFrom('projection_checkpoints').select('checkpoint').where('name', '=', p.name).executeTakeFirst();
      return (row !== undefined && compareCheckpoints(row.checkpoint, last.checkpoint) >= 0) || undefined;
    }, `${p.name} past the last of its events`);
  }
}

/**
 * Applies every event of `projector`'s types a second time, in one transaction, and answers its rows before and after
 * (`rows` reads them). The live projector has taken those events first, and when more of its types came during the
 * look (a reactor still appending), it looks again: a row the live projector moved meanwhile is no replay's doing.
 */
export async function replayedTwice<R>(app: TestApp, projector: Projector, rows: () => Promise<R>): Promise<{ before: R; after: R }> {
  const db = app.rt.database.readDb;
  const read = () => app.rt.store.readAll({ filter: { eventTypes: [...projector.handles] }, maxCount: 100_000 });
  for (let look = 1; ; look++) {
    await projectorsCaughtUp(app, [projector]);
    const events = await read();
    const before = await rows();
    await db.transaction().execute(async (trx) => {
      for (const e of events) await projector.apply(trx, e);
    });
    const after = await rows();
    if ((await read()).length === events.length || look === 5) return { before, after };
  }
}

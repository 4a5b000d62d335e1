import { compareCheckpoints } from '../../application/ports/event-store.port.js';
import { allProjectors } from '../../infrastructure/capabilities/index.js';
import type { Projector } from '../../projections/shared/projector.js';
import type { TestApp } from './http.js';
import { eventually } from './numbers.js';

/**
 * Waits until each projector (by default the lagging ones, whose read models may be up to PROJECTION_LAG_MS behind:
 * docs/event-store.md#lagging-projectors) has a stored checkpoint at or past the last event of its types in the log.
 */
export async function projectorsCaughtUp(
  app: TestApp,
  projectors: readonly Projector[] = allProjectors.filter((p) => p.lags),
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

import type { Kysely } from 'kysely';
import { type Checkpoint, compareCheckpoints } from '../../application/ports/event-store.port.js';
import type { ReadDb } from '../../projections/shared/read-db.js';

/**
 * Whether a reactor has handled everything up to `checkpoint`. On a server a reactor runs as partitions
 * (`<name>#<k>/<n>`, docs/event-store.md#partitioned-reactors), each with its own checkpoint: every one of them
 * must be past it.
 */
export async function reactorPast(db: Kysely<ReadDb>, reactor: string, checkpoint: Checkpoint): Promise<boolean> {
  const rows = await db
    .selectFrom('projection_checkpoints')
    .select(['name', 'checkpoint'])
    .where((w) => w.or([w('name', '=', reactor), w('name', 'like', `${reactor}#%`)]))
    .execute();
  return rows.length > 0 && rows.every((r) => compareCheckpoints(r.checkpoint, checkpoint) >= 0);
}

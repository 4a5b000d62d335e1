import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { ReadDb } from './read-db.js';

/**
 * A projector turns events into read-model rows. It declares the event types it handles and the tables it
 * owns (for rebuilds); `apply` runs inside the batch transaction and must be idempotent per event, which
 * every projector gets by storing the stream revision a row reflects and ignoring older-or-equal ones.
 */
export interface Projector {
  readonly name: string;
  readonly handles: ReadonlySet<string>;
  readonly tables: readonly (keyof ReadDb & string)[];
  apply(db: Kysely<ReadDb>, event: RecordedEvent): Promise<void>;
}

export class CheckpointMovedError extends Error {
  constructor(readonly projector: string) {
    super(`checkpoint of ${projector} moved under us (another process runs it?)`);
    this.name = 'CheckpointMovedError';
  }
}

/** Apply a batch and move the checkpoint in one transaction; the checkpoint update is a compare-and-set. */
export async function runBatch(db: Kysely<ReadDb>, p: Projector, from: string, batch: readonly RecordedEvent[]): Promise<string> {
  const to = batch.at(-1)?.checkpoint;
  if (to === undefined) return from;
  await db.transaction().execute(async (trx) => {
    for (const e of batch) if (p.handles.has(e.type)) await p.apply(trx, e);
    const r = await trx.updateTable('projection_checkpoints').set({ checkpoint: to, updated_at: new Date() })
      .where('name', '=', p.name).where('checkpoint', '=', from).executeTakeFirst();
    if (r.numUpdatedRows !== 1n) throw new CheckpointMovedError(p.name);
  });
  return to;
}

/** Skip events a row already reflects: true when `revision` (stored) is at or past the event's. */
export const alreadyApplied = (stored: string | bigint | null | undefined, e: RecordedEvent): boolean =>
  stored !== null && stored !== undefined && BigInt(stored) >= e.streamRevision;

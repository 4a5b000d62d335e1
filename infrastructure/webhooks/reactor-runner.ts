import type { Kysely } from 'kysely';
import type { Checkpoint, EventStorePort, RecordedEvent, Subscription } from '../../application/ports/event-store.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { ensureCheckpoint } from '../../projections/shared/engine.js';
import { CheckpointMovedError } from '../../projections/shared/projector.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import type { BackgroundWorker } from '../workers.js';

/**
 * Runs a reactor (a process manager whose effects are new events) as a catch-up subscription from its own
 * checkpoint in `projection_checkpoints`. The effects go to the event store, not into the read-model
 * transaction, so the handler must be idempotent: after a crash between the effects and the checkpoint, the
 * batch runs again. The checkpoint moves by compare-and-set; a reactor that finds it moved (another process
 * runs it too) restarts from the stored checkpoint.
 */
export class ReactorRunner implements BackgroundWorker {
  private sub: Subscription | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    readonly name: string,
    private readonly store: EventStorePort,
    private readonly db: Kysely<ReadDb>,
    private readonly eventTypes: readonly string[],
    private readonly handle: (batch: readonly RecordedEvent[]) => Promise<void>,
    private readonly log: LoggerPort,
    private readonly o: { restartDelayMs?: number; batchSize?: number } = {},
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.startSubscription();
  }

  private async startSubscription(): Promise<void> {
    if (this.stopped) return;
    let cursor: Checkpoint = await ensureCheckpoint(this.db, this.name);
    this.sub = this.store.subscribe(
      { after: cursor, filter: { eventTypes: this.eventTypes }, batchSize: this.o.batchSize ?? 100, onError: (err) => this.restartLater(err) },
      async (batch) => {
        await this.handle(batch);
        const to = batch.at(-1)!.checkpoint;
        const r = await this.db.updateTable('projection_checkpoints').set({ checkpoint: to, updated_at: new Date() })
          .where('name', '=', this.name).where('checkpoint', '=', cursor).executeTakeFirst();
        if (r.numUpdatedRows !== 1n) throw new CheckpointMovedError(this.name);
        cursor = to;
      },
    );
  }

  private restartLater(err: unknown): void {
    if (this.stopped) return;
    if (err instanceof CheckpointMovedError) this.log.info({ reactor: this.name }, 'reactor checkpoint moved (another process runs it); restarting from it');
    else this.log.error({ err, reactor: this.name }, 'reactor failed; restarting from its checkpoint');
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.startSubscription().catch((e: unknown) => this.restartLater(e));
    }, this.o.restartDelayMs ?? 1000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.sub?.stop();
    this.sub = null;
  }
}

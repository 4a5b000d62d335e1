import type { Kysely } from 'kysely';
import type { EventStorePort } from '../../application/ports/event-store.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { Reactor } from '../../application/shared/process-manager.js';
import { CheckpointRunner, moveCheckpoint } from '../../projections/shared/checkpoint-runner.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import type { BackgroundWorker } from '../workers.js';

export type { Reactor } from '../../application/shared/process-manager.js';
export { LeaseLostError } from '../../projections/shared/checkpoint-runner.js';

/**
 * Runs a reactor through the CheckpointRunner that also runs the projectors: its own checkpoint (kind
 * `reactor`), one process at a time (a lease renewed at a third of `leaseTtlMs`). Unlike a projector, its
 * effects leave the database (carrier, other streams), so there is no transaction around a batch: the
 * effects run first, then the checkpoint moves (compare-and-set). A crash in between redelivers the batch,
 * which the reactor's idempotence absorbs: at-least-once with idempotent steps.
 */
export class ReactorRunner implements BackgroundWorker {
  readonly name: string;
  private readonly runner: CheckpointRunner;

  constructor(
    store: EventStorePort,
    db: Kysely<ReadDb>,
    reactor: Reactor,
    log: LoggerPort,
    o: { leaseTtlMs: number; retryDelayMs?: number; batchSize?: number },
  ) {
    this.name = `reactor:${reactor.name}`;
    this.runner = new CheckpointRunner(
      store,
      db,
      {
        name: reactor.name,
        kind: 'reactor',
        eventTypes: reactor.handles,
        async commit(batch, from, to) {
          await reactor.handleBatch(batch);
          await moveCheckpoint(db, reactor.name, from, to);
        },
      },
      log,
      {
        leaseTtlMs: o.leaseTtlMs,
        batchSize: o.batchSize ?? 100,
        ...(o.retryDelayMs !== undefined ? { retryDelayMs: o.retryDelayMs } : {}),
      },
    );
  }

  async start(): Promise<void> {
    this.runner.start();
  }

  async stop(): Promise<void> {
    await this.runner.stop();
  }
}

import { EventEmitter } from 'node:events';
import type { Kysely } from 'kysely';
import {
  START, compareCheckpoints, type Checkpoint, type EventStorePort, type RecordedEvent, type Subscription,
} from '../../application/ports/event-store.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { ReadModelsPort } from '../../application/ports/read-models.port.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Projector } from './projector.js';
import type { ReadDb } from './read-db.js';

export async function ensureCheckpoint(db: Kysely<ReadDb>, name: string): Promise<Checkpoint> {
  await db.insertInto('projection_checkpoints').values({ name, checkpoint: START, updated_at: new Date() })
    .onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await db.selectFrom('projection_checkpoints').select('checkpoint').where('name', '=', name).executeTakeFirstOrThrow();
  return row.checkpoint;
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

/**
 * Runs projectors as catch-up subscriptions (one per projector, filtered to its event types). A failed
 * batch rolls back with its checkpoint and the projector restarts from the stored checkpoint after a delay,
 * so nothing is applied twice and nothing is skipped.
 */
export class ProjectionEngine {
  private readonly subs = new Map<string, Subscription>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly advanced = new EventEmitter();
  private stopped = false;

  constructor(
    private readonly store: EventStorePort,
    private readonly db: Kysely<ReadDb>,
    readonly projectors: readonly Projector[],
    private readonly log: LoggerPort,
    private readonly o: { restartDelayMs?: number; batchSize?: number } = {},
  ) {
    this.advanced.setMaxListeners(0);
  }

  /** Starts every projector and resolves when all have caught up with the log. */
  async start(): Promise<void> {
    this.stopped = false;
    await Promise.all(this.projectors.map((p) => this.startOne(p)));
  }

  private async startOne(p: Projector): Promise<void> {
    if (this.stopped) return;
    const from = await ensureCheckpoint(this.db, p.name);
    let cursor = from;
    const sub = this.store.subscribe(
      {
        after: from,
        filter: { eventTypes: [...p.handles] },
        ...(this.o.batchSize ? { batchSize: this.o.batchSize } : {}),
        onError: (err) => this.restartLater(p, err),
      },
      async (batch) => {
        cursor = await runBatch(this.db, p, cursor, batch);
        this.advanced.emit('advanced', p.name, cursor);
      },
    );
    this.subs.set(p.name, sub);
    await sub.caughtUp.catch(() => undefined);
  }

  private restartLater(p: Projector, err: unknown): void {
    if (this.stopped) return;
    this.log.error({ err, projector: p.name }, 'projector failed; restarting from its checkpoint');
    const t = setTimeout(() => {
      this.timers.delete(t);
      void this.startOne(p).catch((e: unknown) => this.restartLater(p, e));
    }, this.o.restartDelayMs ?? 1000);
    this.timers.add(t);
  }

  onAdvanced(fn: (name: string, checkpoint: Checkpoint) => void): () => void {
    this.advanced.on('advanced', fn);
    return () => this.advanced.off('advanced', fn);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.subs.values()].map((s) => s.stop()));
    this.subs.clear();
  }
}

/**
 * Read-your-writes. Waits until each projector that handles one of the written event types has a stored
 * checkpoint at or past the write. Projectors may run in this process (woken at once) or in another
 * (seen by polling the checkpoint table). Gives up after `timeoutMs` with READ_MODEL_TIMEOUT (503).
 */
export class ReadModelWaiter implements ReadModelsPort {
  constructor(
    private readonly db: Kysely<ReadDb>,
    private readonly projectors: readonly Pick<Projector, 'name' | 'handles'>[],
    private readonly engine: ProjectionEngine | null,
    private readonly o: { timeoutMs: number; pollMs?: number },
  ) {}

  async waitFor(checkpoint: Checkpoint, eventTypes: readonly string[]): Promise<void> {
    const names = this.projectors.filter((p) => eventTypes.some((t) => p.handles.has(t))).map((p) => p.name);
    if (names.length === 0) return;
    const deadline = Date.now() + this.o.timeoutMs;
    let wake: (() => void) | null = null;
    const off = this.engine?.onAdvanced(() => wake?.()) ?? (() => undefined);
    try {
      for (;;) {
        const rows = await this.db.selectFrom('projection_checkpoints').select(['name', 'checkpoint']).where('name', 'in', names).execute();
        const behind = names.filter((n) => {
          const row = rows.find((r) => r.name === n);
          return !row || compareCheckpoints(row.checkpoint, checkpoint) < 0;
        });
        if (behind.length === 0) return;
        const left = deadline - Date.now();
        if (left <= 0) throw new DomainError('READ_MODEL_TIMEOUT', `The write was stored but the read model (${behind.join(', ')}) has not caught up yet; retry the read shortly`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(done, Math.min(left, this.o.pollMs ?? 50));
          function done() { clearTimeout(t); wake = null; resolve(); }
          wake = done;
        });
      }
    } finally {
      off();
    }
  }
}

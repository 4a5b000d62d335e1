import { EventEmitter } from 'node:events';
import type { Kysely } from 'kysely';
import {
  type Checkpoint,
  compareCheckpoints,
  type EventStorePort,
  type RecordedEvent,
  START,
} from '../../application/ports/event-store.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { ReadModelsPort } from '../../application/ports/read-models.port.js';
import { perTurn } from '../../application/shared/per-turn.js';
import { DomainError } from '../../domain/shared/errors.js';
import { CheckpointRunner, type LeaseListener, moveCheckpoint } from './checkpoint-runner.js';
import { KeptRows } from './kept-rows.js';
import type { LeaseRenewals } from './lease-renewals.js';
import { type BatchOutcome, type BatchPipeline, pipelinedBatch } from './pipelined-batch.js';
import type { Projector } from './projector.js';
import type { ReadDb } from './read-db.js';

export { CheckpointMovedError, ensureCheckpoint } from './checkpoint-runner.js';

/** How long a projector's lease outlives a crashed holder when the caller sets none. */
const DEFAULT_LEASE_TTL_MS = 15_000;

/**
 * Apply a batch and move the checkpoint in one transaction; the checkpoint update is a compare-and-set. Embedded, a
 * projector that reads before it writes has its writes and the compare-and-set sent as one message
 * (docs/event-store.md#pipelined-batches); with `leaveUntouched`, such a batch that neither read nor wrote sends
 * nothing, and is `untouched`: its checkpoint is the caller's to store later (docs/event-store.md#untouched-batches).
 */
export async function runBatch(
  db: Kysely<ReadDb>,
  p: Projector,
  from: string,
  batch: readonly RecordedEvent[],
  pipeline?: BatchPipeline,
  o: { leaveUntouched?: boolean; kept?: KeptRows<unknown> } = {},
): Promise<BatchOutcome> {
  const to = batch.at(-1)?.checkpoint;
  if (to === undefined) return 'untouched';
  if (pipeline && p.pipelined) {
    const done = await pipelinedBatch(db, pipeline, p, from, to, batch, o);
    if (done) return done;
  }
  await db.transaction().execute(async (trx) => {
    o.kept?.begin();
    await p.applyBatch(trx, batch, o.kept);
    await moveCheckpoint(trx, p.name, from, to);
  });
  return 'stored';
}

/**
 * Runs projectors as catch-up subscriptions (one per projector, filtered to its event types), each through a
 * CheckpointRunner: one process at a time per projector (a lease), rows and checkpoint in one transaction. A
 * failed batch rolls back with its checkpoint and the projector restarts from the stored checkpoint after a
 * delay, so nothing is applied twice and nothing is skipped.
 */
export class ProjectionEngine {
  private runners: CheckpointRunner[] = [];
  private readonly advanced = new EventEmitter();

  constructor(
    private readonly store: EventStorePort,
    private readonly db: Kysely<ReadDb>,
    readonly projectors: readonly Projector[],
    private readonly log: LoggerPort,
    private readonly o: {
      restartDelayMs?: number;
      batchSize?: number;
      leaseTtlMs?: number;
      lagMs?: number;
      /** the embedded database's statements in one message (docs/event-store.md#pipelined-batches) */
      pipeline?: BatchPipeline;
      /**
       * a pipelined batch that neither read nor wrote sends nothing, and its checkpoint is stored this long after,
       * or with the next batch that writes (docs/event-store.md#untouched-batches); unset: every batch stores it
       */
      storeUntouchedAfterMs?: number;
      /** renews the projectors' leases with the process's others, in one statement */
      renewals?: LeaseRenewals;
    } = {},
  ) {
    this.advanced.setMaxListeners(0);
  }

  /**
   * Starts every projector and resolves when each has caught up with the log, or is driven by another
   * process (its lease is held elsewhere), or failed its first attempt (it keeps retrying).
   */
  async start(): Promise<void> {
    if (this.runners.length > 0) return;
    const untouchedMs = this.o.storeUntouchedAfterMs;
    const leaveUntouched = untouchedMs !== undefined;
    this.runners = this.projectors.map((p) => {
      // the rows its batches wrote, for its next batches (docs/event-store.md#kept-rows)
      const kept = p.keepsRows ? new KeptRows<unknown>(p.keepsRows) : undefined;
      return new CheckpointRunner(
        this.store,
        this.db,
        {
          name: p.name,
          kind: 'projector',
          eventTypes: [...p.handles],
          commit: async (batch, from) => {
            let outcome: BatchOutcome;
            try {
              outcome = await runBatch(this.db, p, from, batch, this.o.pipeline, { leaveUntouched, ...(kept ? { kept } : {}) });
            } catch (err) {
              kept?.failed();
              throw err;
            }
            kept?.committed();
            return outcome === 'untouched' ? 'deferred' : 'stored';
          },
        },
        this.log,
        {
          leaseTtlMs: this.o.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
          retryDelayMs: this.o.restartDelayMs ?? 1000,
          ...(this.o.batchSize ? { batchSize: this.o.batchSize } : {}),
          ...((p.lags || p.lagsOn) && this.o.lagMs ? { lagMs: this.o.lagMs } : {}),
          ...(p.lagsOn ? { lagsOnly: [...p.lagsOn] } : {}),
          onAdvanced: (checkpoint, types) => this.advanced.emit('advanced', p.name, checkpoint, types),
          ...(p.tells ? { tells: p.tells } : {}),
          onHeld: (until) => {
            kept?.held(until);
            this.advanced.emit('held', p.name, until);
          },
          onCommitting: (phase) => this.advanced.emit('committing', p.name, phase),
          ...(this.o.renewals ? { renewals: this.o.renewals } : {}),
          ...(untouchedMs !== undefined ? { storeDeferredAfterMs: untouchedMs } : {}),
        },
      );
    });
    for (const r of this.runners) r.start();
    await Promise.all(this.runners.map((r) => r.ready));
  }

  /** Every batch a projector of this engine commits: its name, how far, and the batch's event types. */
  onAdvanced(fn: (name: string, checkpoint: Checkpoint, types: readonly string[]) => void): () => void {
    this.advanced.on('advanced', fn);
    return () => this.advanced.off('advanced', fn);
  }

  /**
   * A projector's lease, as this process holds it: until when no other process can take it (`performance.now()`), at
   * each taking and renewal; null once let go. And each batch's commit, as it starts and ends. The kept reads on a
   * server listen (docs/event-store.md#kept-reads).
   */
  onLease(fn: LeaseListener): () => void {
    this.advanced.on('held', fn.held);
    this.advanced.on('committing', fn.committing);
    return () => {
      this.advanced.off('held', fn.held);
      this.advanced.off('committing', fn.committing);
    };
  }

  async stop(): Promise<void> {
    const runners = this.runners;
    this.runners = [];
    await Promise.all(runners.map((r) => r.stop()));
  }
}

/**
 * Read-your-writes. Waits until each projector that handles one of the written event types has a stored
 * checkpoint at or past the write. It hears whenever a projector has advanced, and how far (`advanced`: in this
 * process, or on a server in any process, docs/event-store.md#wake-ups), and keeps the furthest checkpoint heard of
 * each: a wait that those already answer costs no statement. Otherwise it reads the stored checkpoints once, then
 * answers from what it hears, and reads them again every `pollMs` in case such word was lost. Gives up after
 * `timeoutMs` with READ_MODEL_TIMEOUT (503). With `hearsEveryAdvance` (embedded: every projector runs in this
 * process and tells each batch it commits), what it heard since it was made is what the read models hold, so a wait reads
 * nothing first; it still reads every `pollMs` without word.
 */
export class ReadModelWaiter implements ReadModelsPort {
  /** the furthest checkpoint heard of, per projector */
  private readonly heard = new Map<string, Checkpoint>();
  private listening = false;
  /**
   * Reads the stored checkpoints of these projectors into what it heard. The reads asked for in one turn of the event
   * loop (the waits of the requests answered together) go as one statement (docs/event-store.md#reading-streams).
   */
  private readonly readStored = perTurn(async (names: readonly string[]) => {
    const rows = await this.db.selectFrom('projection_checkpoints').select(['name', 'checkpoint']).where('name', 'in', names).execute();
    for (const r of rows) this.hear(r.name, r.checkpoint);
  });

  constructor(
    private readonly db: Kysely<ReadDb>,
    private readonly projectors: readonly Pick<Projector, 'name' | 'handles' | 'tables' | 'lags' | 'lagsOn'>[],
    private readonly advanced: ((fn: (projector: string, checkpoint: Checkpoint) => void) => () => void) | null,
    private readonly o: { timeoutMs: number; pollMs?: number; hearsEveryAdvance?: boolean },
  ) {
    if (o.hearsEveryAdvance) this.listen();
  }

  private listen(): void {
    if (this.listening || !this.advanced) return;
    this.listening = true;
    this.advanced((projector, at) => this.hear(projector, at));
  }

  private hear(projector: string, checkpoint: Checkpoint): void {
    const was = this.heard.get(projector);
    if (!was || compareCheckpoints(checkpoint, was) > 0) this.heard.set(projector, checkpoint);
  }

  /**
   * How far a projector's read model reflects the log. Where every batch is heard (`hearsEveryAdvance`), what was heard
   * of it (every batch is told once it is committed, or handled having changed nothing), read from its stored
   * checkpoint only until the first word; elsewhere its stored checkpoint, which goes back when it is rebuilt.
   */
  async reflected(projector: string): Promise<Checkpoint> {
    const hearsAll = this.o.hearsEveryAdvance === true && this.advanced !== null;
    const heard = hearsAll ? this.heard.get(projector) : undefined;
    if (heard !== undefined) return heard;
    const row = await this.db.selectFrom('projection_checkpoints').select('checkpoint').where('name', '=', projector).executeTakeFirst();
    const stored = row?.checkpoint ?? START;
    if (hearsAll) this.hear(projector, stored);
    return stored;
  }

  async waitFor(checkpoint: Checkpoint, eventTypes: readonly string[], o: { tables?: readonly string[] } = {}): Promise<void> {
    // a lagging read model is one nothing waits on (docs/event-store.md#lagging-projectors)
    const names = this.projectors
      .filter((p) => !p.lags && eventTypes.some((t) => p.handles.has(t) && !p.lagsOn?.has(t)))
      .filter((p) => !o.tables || p.tables.some((t) => o.tables?.includes(t)))
      .map((p) => p.name);
    if (names.length === 0) return;
    this.listen();
    const behind = () => names.filter((n) => compareCheckpoints(this.heard.get(n) ?? START, checkpoint) < 0);
    if (behind().length === 0) return;
    let first = true;
    await this.poll(names, this.o.timeoutMs, async (last, woken) => {
      // the stored checkpoints are read first (unless every advance is heard), when no word came in `pollMs`, and last
      const read = last || (first ? !this.o.hearsEveryAdvance || !this.advanced : !woken);
      first = false;
      if (read) await this.readStored(names);
      if (behind().length === 0) return true;
      if (last)
        throw new DomainError(
          'READ_MODEL_TIMEOUT',
          `The write was stored but the read model (${behind().join(', ')}) has not caught up yet; retry the read shortly`,
        );
      return null;
    });
  }

  async waitForRow<T>(find: () => Promise<T | null>, o: { tables: readonly string[]; withinMs: number }): Promise<T | null> {
    const names = this.projectors.filter((p) => p.tables.some((t) => o.tables.includes(t))).map((p) => p.name);
    return this.poll(names, o.withinMs, () => find());
  }

  /**
   * Asks `look` until it answers (not null), again each time one of the projectors `names` advances (`woken`) or
   * every `pollMs`, for at most `withinMs`; its last call is told so (`last`), and null is the answer when nothing
   * came by then.
   */
  private async poll<T>(
    names: readonly string[],
    withinMs: number,
    look: (last: boolean, woken: boolean) => Promise<T | null>,
  ): Promise<T | null> {
    const deadline = Date.now() + withinMs;
    let wake: (() => void) | null = null;
    let woken = false;
    /** word that came while `look` ran, when nothing was waiting for it yet */
    let unheard = false;
    const off =
      this.advanced?.((projector) => {
        if (!names.includes(projector)) return;
        if (wake) wake();
        else unheard = true;
      }) ?? (() => undefined);
    try {
      for (;;) {
        const left = deadline - Date.now();
        unheard = false;
        const found = await look(left <= 0, woken);
        if (found !== null) return found;
        if (left <= 0) return null;
        if (unheard) {
          woken = true;
          continue;
        }
        woken = await new Promise<boolean>((resolve) => {
          const t = setTimeout(() => done(false), Math.min(left, this.o.pollMs ?? 250));
          function done(byWord: boolean) {
            clearTimeout(t);
            wake = null;
            resolve(byWord);
          }
          wake = () => done(true);
        });
      }
    } finally {
      off();
    }
  }
}

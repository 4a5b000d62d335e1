import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import {
  type Checkpoint,
  type EventStorePort,
  type RecordedEvent,
  START,
  type Subscription,
} from '../../application/ports/event-store.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { LeaseRenewals } from './lease-renewals.js';
import type { ReadDb } from './read-db.js';

/**
 * Projectors and reactors keep their checkpoints in one table (`projection_checkpoints`, told apart by
 * `kind`), so a name is either a projector's or a reactor's, never both.
 */
export type CheckpointKind = 'projector' | 'reactor';

export class CheckpointMovedError extends Error {
  constructor(readonly consumer: string) {
    super(`checkpoint of ${consumer} moved under us (another process runs it?)`);
    this.name = 'CheckpointMovedError';
  }
}

export class LeaseLostError extends Error {
  constructor(name: string) {
    super(`lease on ${name} lost`);
    this.name = 'LeaseLostError';
  }
}

/** A partition given back so that a process that joined gets its share (not a failure). */
class YieldedError extends Error {
  constructor(name: string) {
    super(`${name} given back to share the partitions`);
    this.name = 'YieldedError';
  }
}

/** Whether this process may hold one more lease of a group (a reactor's partitions), and when to give one back. */
export type Admission = Readonly<{ mayAcquire(): boolean; acquired(): void; released(): void; mustYield(): boolean }>;

/**
 * The stored checkpoint of `name`, seeded on first use (at START, or where `seed` says: a new partition of a
 * reactor starts where the reactor was); refuses a name that the other kind owns.
 */
export async function ensureCheckpoint(
  db: Kysely<ReadDb>,
  name: string,
  kind: CheckpointKind = 'projector',
  seed?: () => Promise<Checkpoint>,
): Promise<Checkpoint> {
  const exists = await db.selectFrom('projection_checkpoints').select('name').where('name', '=', name).executeTakeFirst();
  if (!exists)
    await db
      .insertInto('projection_checkpoints')
      .values({ name, kind, checkpoint: seed ? await seed() : START, updated_at: new Date() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  const row = await db
    .selectFrom('projection_checkpoints')
    .select(['checkpoint', 'kind'])
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  if (row.kind !== kind) throw new Error(`checkpoint name ${name} belongs to a ${row.kind}, not a ${kind}`);
  return row.checkpoint;
}

/** Moves a checkpoint from `from` to `to`, compare-and-set: throws CheckpointMovedError if it was not at `from`. */
export async function moveCheckpoint(db: Kysely<ReadDb>, name: string, from: Checkpoint, to: Checkpoint): Promise<void> {
  const r = await db
    .updateTable('projection_checkpoints')
    .set({ checkpoint: to, updated_at: new Date() })
    .where('name', '=', name)
    .where('checkpoint', '=', from)
    .executeTakeFirst();
  if (r.numUpdatedRows !== 1n) throw new CheckpointMovedError(name);
}

/** What the runner drives: a projector (rows and checkpoint in one transaction) or a reactor (effects, then checkpoint). */
export interface CheckpointedConsumer {
  readonly name: string;
  readonly kind: CheckpointKind;
  readonly eventTypes: readonly string[];
  /**
   * Handles a batch and moves the checkpoint from `from` to `to` with `moveCheckpoint`. Throwing ends the
   * subscription; the runner starts again from the stored checkpoint after a back-off, so the batch is
   * delivered again: the consumer is idempotent or rolls the batch back with the checkpoint. It answers `deferred`
   * when it left the checkpoint at `from` for the runner to store later (`storeDeferredAfterMs`): a projector's batch
   * that touched nothing (docs/event-store.md#untouched-batches), a reactor's batch (docs/event-store.md#reactors-and-leases).
   */
  commit(batch: readonly RecordedEvent[], from: Checkpoint, to: Checkpoint): Promise<CommitOutcome>;
}

/** A batch's commit starting, or ending (committed or not): docs/event-store.md#kept-reads-on-a-server. */
export type CommitPhase = 'start' | 'end';

/**
 * What a process hears of its projectors' leases and commits (the engine's `onLease`): until when no other process can
 * take a projector's lease (`performance.now()`), at each taking and renewal, null once let go; and each batch's commit.
 */
export type LeaseListener = Readonly<{
  held: (projector: string, until: number | null) => void;
  committing: (projector: string, phase: CommitPhase) => void;
}>;

/** What a consumer's commit did with the checkpoint: `stored` it, or left it `deferred` for the runner to store. */
export type CommitOutcome = 'stored' | 'deferred';

export type CheckpointRunnerOptions = Readonly<{
  leaseTtlMs: number;
  /** first delay before a restart after a failure; doubles per failure in a row, at most 30 s */
  retryDelayMs?: number;
  batchSize?: number;
  /** woken by an append, wait this long before reading (docs/event-store.md#lagging-projectors) */
  lagMs?: number;
  /** with `lagMs`: only these event types wait, any other is read at once (docs/event-store.md#lagging-projectors) */
  lagsOnly?: readonly string[];
  /** told after every batch committed here, with the batch's event types (as `tells` names them) */
  onAdvanced?: (checkpoint: Checkpoint, types: readonly string[]) => void;
  /** the name `onAdvanced` tells for an event of a batch; default its type (docs/event-store.md#wake-ups) */
  tells?: (e: RecordedEvent) => string;
  /**
   * told while this runner holds its lease: until when (`performance.now()`) no other process can take it, at each
   * taking and renewal; null once it lets go, loses it or stops (docs/event-store.md#kept-reads)
   */
  onHeld?: (until: number | null) => void;
  /** told before each batch's commit starts, and after it ends, committed or not (docs/event-store.md#kept-reads) */
  onCommitting?: (phase: CommitPhase) => void;
  /** for a partition: whether this process takes its lease now, and gives it back when over its share */
  admission?: Admission;
  /**
   * Word of leases given back (docs/event-store.md#partitioned-reactors): this runner tells when it gives its lease
   * back, and tries at once when another runner of the same name gives it back, instead of at its next try.
   */
  freed?: Readonly<{ publishFreed(lease: string): void; listenFreed(fn: (lease: string) => void): () => void }>;
  /** renews the lease with the process's other runners' (default: a renewal of its own) */
  renewals?: LeaseRenewals;
  /** where a new checkpoint starts (default START) */
  seed?: () => Promise<Checkpoint>;
  /**
   * the checkpoint of batches the consumer left `deferred` is stored this long after the first of them (or with the
   * next batch it stores, or when the runner stops cleanly or gives a partition back): docs/event-store.md#deferred-checkpoints
   */
  storeDeferredAfterMs?: number;
}>;

/**
 * Runs one consumer as a catch-up subscription from its stored checkpoint, in at most one process at a time.
 *
 * The lease: a row in `worker_leases` named after the consumer, taken when free or expired and renewed at a
 * third of its TTL (with the process's other leases, `LeaseRenewals`); the runner ends its subscription when a
 * renewal fails, and a runner in another process takes over once the lease expires (after a crash, at most one TTL later; a clean stop frees it at once).
 * Lease times are the database's clock: they measure real elapsed time between processes, which the
 * application Clock (movable in tests) is not for. The lease saves duplicate work; correctness does not rest
 * on it, since every commit moves the checkpoint by compare-and-set.
 */
export class CheckpointRunner {
  private readonly holder = randomUUID();
  private stopped = true;
  private main: Promise<void> | null = null;
  private sub: Subscription | null = null;
  private wake: (() => void) | null = null;
  /** stops the renewals of the lease held now */
  private letGo: () => void = () => undefined;
  private readonly renewals: LeaseRenewals;
  private endCurrent: ((reason: unknown) => void) | null = null;
  private markReady: () => void = () => undefined;
  /** while this runner lets the lease it gave back go to another process, word of it (its own) does not wake it */
  private givingBack = false;
  private unlistenFreed: (() => void) | null = null;
  /** Resolves once the consumer has caught up with the log, or found its lease held elsewhere, or failed once, or stopped. */
  ready: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: EventStorePort,
    private readonly db: Kysely<ReadDb>,
    private readonly consumer: CheckpointedConsumer,
    private readonly log: LoggerPort,
    private readonly o: CheckpointRunnerOptions,
  ) {
    this.renewals = o.renewals ?? new LeaseRenewals(db);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.ready = new Promise<void>((resolve) => {
      this.markReady = resolve;
    });
    this.unlistenFreed =
      this.o.freed?.listenFreed((lease) => {
        if (lease === this.consumer.name && !this.givingBack) this.wake?.();
      }) ?? null;
    this.main = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unlistenFreed?.();
    this.unlistenFreed = null;
    this.markReady();
    this.wake?.();
    this.endCurrent?.(null);
    await this.main;
    this.main = null;
    await this.releaseLease();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(t);
        self.wake = null;
        resolve();
      }
      this.wake = done;
    });
  }

  private async tryLease(): Promise<boolean> {
    const ttl = `${Math.max(1, Math.ceil(this.o.leaseTtlMs / 1000))} seconds`;
    const r = await sql<{ holder: string }>`
      insert into worker_leases (name, holder, expires_at) values (${this.consumer.name}, ${this.holder}, now() + ${ttl}::interval)
      on conflict (name) do update set holder = excluded.holder, expires_at = excluded.expires_at
      where worker_leases.holder = excluded.holder or worker_leases.expires_at < now()
      returning holder`.execute(this.db);
    return r.rows.length === 1;
  }

  private async run(): Promise<void> {
    const { name, kind } = this.consumer;
    let failures = 0;
    while (!this.stopped) {
      const admission = this.o.admission;
      if (admission && !admission.mayAcquire()) {
        this.markReady(); // this process holds its share of the group already
        await this.sleep(Math.max(200, this.o.leaseTtlMs / 3));
        continue;
      }
      let leased = false;
      const sentAt = performance.now();
      try {
        leased = await this.tryLease();
      } catch (err) {
        this.log.warn({ err, [kind]: name }, `${kind} lease check failed`);
      }
      if (!leased) {
        this.markReady(); // another process drives it (or the database is away): nothing to wait for here
        await this.sleep(Math.max(200, this.o.leaseTtlMs / 3));
        continue;
      }
      admission?.acquired();
      const err = await this.runLeased(sentAt, () => {
        failures = 0;
      });
      admission?.released();
      this.markReady();
      if (this.stopped) break;
      if (err instanceof YieldedError) {
        await this.releaseLease();
        this.log.info({ [kind]: name }, `${kind} partition given back to share the work`);
        this.givingBack = true;
        this.o.freed?.publishFreed(name);
        await this.sleep(this.o.leaseTtlMs); // let the other process take it before trying again
        this.givingBack = false;
        continue;
      }
      failures++;
      const delay = Math.min((this.o.retryDelayMs ?? 500) * 2 ** Math.min(failures - 1, 6), 30_000);
      this.log.error({ err, [kind]: name, retryInMs: delay }, `${kind} stopped; restarting from its checkpoint`);
      await this.sleep(delay);
    }
  }

  private async releaseLease(): Promise<void> {
    await this.db
      .deleteFrom('worker_leases')
      .where('name', '=', this.consumer.name)
      .where('holder', '=', this.holder)
      .execute()
      .catch(() => undefined);
  }

  /** Subscribes while holding the lease; resolves with the reason it ended (error, lost lease) or null on stop. */
  private async runLeased(leasedAt: number, committed: () => void): Promise<unknown> {
    const c = this.consumer;
    let cursor: Checkpoint;
    try {
      cursor = await ensureCheckpoint(this.db, c.name, c.kind, this.o.seed);
    } catch (err) {
      return err;
    }
    // the checkpoint stored, and how far batches the consumer deferred have gone past it (stored later:
    // docs/event-store.md#deferred-checkpoints)
    let stored = cursor;
    let deferred: Checkpoint | null = null;
    let storeTimer: NodeJS.Timeout | null = null;
    // a batch's commit and the deferred checkpoint's store never run at once: both compare-and-set from `stored`
    let turn: Promise<unknown> = Promise.resolve();
    const inTurn = <T>(fn: () => Promise<T>): Promise<T> => {
      const r = turn.then(fn);
      turn = r.catch(() => undefined);
      return r;
    };
    const storeDeferred = () =>
      inTurn(async () => {
        if (storeTimer) clearTimeout(storeTimer);
        storeTimer = null;
        if (deferred === null) return;
        await moveCheckpoint(this.db, c.name, stored, deferred);
        stored = deferred;
        deferred = null;
      });
    return new Promise<unknown>((resolve) => {
      let ended = false;
      const end = (reason: unknown) => {
        if (ended) return;
        ended = true;
        this.endCurrent = null;
        this.o.onHeld?.(null);
        this.letGo();
        this.letGo = () => undefined;
        if (storeTimer) clearTimeout(storeTimer);
        storeTimer = null;
        const sub = this.sub;
        this.sub = null;
        void (sub ? sub.stop() : Promise.resolve())
          // a clean stop, or a partition given back, stores how far it went (before the lease goes: the next holder
          // starts there); after a failure the next run starts from what is stored
          .then(() => (reason === null || reason instanceof YieldedError ? storeDeferred().catch(() => undefined) : undefined))
          .then(
            () => resolve(reason),
            () => resolve(reason),
          );
      };
      this.endCurrent = end;
      // renewed with the process's other leases, in one statement (docs/event-store.md#reactors-and-leases)
      this.letGo = this.renewals.hold({
        name: c.name,
        holder: this.holder,
        ttlMs: this.o.leaseTtlMs,
        renewing: () => {
          if (!this.o.admission?.mustYield()) return true;
          end(new YieldedError(c.name));
          return false;
        },
        lost: (err) => end(err ?? new LeaseLostError(c.name)),
        renewed: (sentAt) => {
          if (!ended) this.o.onHeld?.(sentAt + this.o.leaseTtlMs);
        },
      });
      this.o.onHeld?.(leasedAt + this.o.leaseTtlMs);
      const sub = this.store.subscribe(
        {
          after: cursor,
          filter: { eventTypes: c.eventTypes },
          name: c.name,
          ...(this.o.lagMs ? { lagMs: this.o.lagMs } : {}),
          ...(this.o.lagsOnly ? { lagsOnly: this.o.lagsOnly } : {}),
          ...(this.o.batchSize ? { batchSize: this.o.batchSize } : {}),
          onError: (err) => end(err),
        },
        async (batch) => {
          const to = batch.at(-1)?.checkpoint;
          if (to === undefined) return;
          this.o.onCommitting?.('start');
          try {
            await inTurn(async () => {
              if ((await c.commit(batch, stored, to)) === 'stored') {
                stored = to;
                deferred = null;
                return;
              }
              deferred = to;
              storeTimer ??= setTimeout(
                () => void storeDeferred().catch((err: unknown) => end(err)),
                this.o.storeDeferredAfterMs ?? 0,
              ).unref();
            });
          } finally {
            this.o.onCommitting?.('end');
          }
          committed();
          this.o.onAdvanced?.(to, [...new Set(batch.map(this.o.tells ?? ((e) => e.type)))]);
        },
      );
      this.sub = sub;
      if (ended) void sub.stop().catch(() => undefined); // ended while subscribing
      sub.caughtUp.then(
        () => this.markReady(),
        () => this.markReady(),
      );
      if (this.stopped) end(null);
    });
  }
}

import type { Kysely } from 'kysely';
import type { EventStorePort, RecordedEvent } from '../../application/ports/event-store.port.js';
import { type Checkpoint, compareCheckpoints, START } from '../../application/ports/event-store.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { Reactor } from '../../application/shared/process-manager.js';
import { CheckpointRunner, type CheckpointRunnerOptions, moveCheckpoint } from '../../projections/shared/checkpoint-runner.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import type { BackgroundWorker } from '../workers.js';
import { isTransient, WorkIsolation } from './isolation.js';
import { PartitionShare, type ProcessMembership, partitionOf } from './membership.js';

export type { Reactor } from '../../application/shared/process-manager.js';
export { LeaseLostError } from '../../projections/shared/checkpoint-runner.js';

/**
 * Runs a reactor through the CheckpointRunner that also runs the projectors: its own checkpoint (kind
 * `reactor`), one process at a time (a lease renewed at a third of `leaseTtlMs`). Unlike a projector, its
 * effects leave the database (carrier, other streams), so there is no transaction around a batch: the
 * effects run first, then the checkpoint moves (compare-and-set). A crash in between redelivers the batch,
 * which the reactor's idempotence absorbs: at-least-once with idempotent steps.
 *
 * With `partitions` over 1 (docs/event-store.md#partitioned-reactors), the reactor runs as that many partitions,
 * `<name>#<k>/<partitions>`: each has its own checkpoint and lease and handles the events whose partition key (the
 * reactor's `partitionKey`, else the stream) hashes to it, so
 * several worker processes share the work, each holding its share of the partitions; a partition whose process
 * dies is taken over when its lease expires. New partitions start where the reactor was before (unpartitioned, or
 * the furthest-behind partition of another number of them), so changing the number of partitions skips nothing.
 */
export class ReactorRunner implements BackgroundWorker {
  readonly name: string;
  private readonly runners: CheckpointRunner[];

  constructor(
    store: EventStorePort,
    db: Kysely<ReadDb>,
    reactor: Reactor,
    log: LoggerPort,
    o: {
      leaseTtlMs: number;
      retryDelayMs?: number;
      batchSize?: number;
      partitions?: number;
      membership?: ProcessMembership;
      /** tries of one event that fails for good before it is isolated (default 3) */
      triesBeforeIsolation?: number;
      /**
       * a partition stores its checkpoint this long after the first batch it has not stored, and when it stops
       * (docs/event-store.md#reactors-and-leases); 0: after every batch
       */
      checkpointEveryMs?: number;
      /** word of partitions given back, between the processes (docs/event-store.md#partitioned-reactors) */
      freed?: CheckpointRunnerOptions['freed'];
      /** renews the partitions' leases with the process's others, in one statement */
      renewals?: CheckpointRunnerOptions['renewals'];
    },
  ) {
    this.name = `reactor:${reactor.name}`;
    const partitions = o.partitions ?? 1;
    const share = partitions > 1 && o.membership ? new PartitionShare(o.membership, partitions) : null;
    const options = {
      leaseTtlMs: o.leaseTtlMs,
      batchSize: o.batchSize ?? 100,
      ...(o.retryDelayMs !== undefined ? { retryDelayMs: o.retryDelayMs } : {}),
    };
    const keyOf = (e: RecordedEvent): string => reactor.partitionKey?.(e) ?? e.streamName;
    const isolation = new WorkIsolation(db, log);
    const handle = (name: string, mine: readonly RecordedEvent[]) =>
      handleIsolating(reactor, name, mine, isolation, { tries: o.triesBeforeIsolation ?? 3, delayMs: o.retryDelayMs ?? 500 });
    const everyMs = o.checkpointEveryMs ?? 0;
    this.runners = Array.from({ length: partitions }, (_, k) => {
      const name = partitions === 1 ? reactor.name : `${reactor.name}#${k}/${partitions}`;
      return new CheckpointRunner(
        store,
        db,
        {
          name,
          kind: 'reactor',
          eventTypes: reactor.handles,
          async commit(batch, from, to) {
            const mine = partitions === 1 ? batch : batch.filter((e) => partitionOf(keyOf(e), partitions) === k);
            if (mine.length > 0) await handle(name, mine);
            if (everyMs > 0) return 'deferred'; // the runner stores it later: docs/event-store.md#deferred-checkpoints
            await moveCheckpoint(db, name, from, to);
            return 'stored';
          },
        },
        log,
        {
          ...options,
          ...(o.renewals ? { renewals: o.renewals } : {}),
          ...(everyMs > 0 ? { storeDeferredAfterMs: everyMs } : {}),
          ...(share ? { admission: share } : {}),
          ...(share && o.freed ? { freed: o.freed } : {}),
          ...(partitions > 1 || reactor.replaces?.length ? { seed: () => seedOf(db, reactor, partitions) } : {}),
        },
      );
    });
  }

  async start(): Promise<void> {
    for (const r of this.runners) r.start();
  }

  async stop(): Promise<void> {
    // each stores what it handled and had not stored yet; a checkpoint another process moved meanwhile (or a database
    // that is away) is left as it is: the batches after it are delivered again, which the reactor absorbs
    await Promise.all(this.runners.map((r) => r.stop()));
  }
}

/**
 * Handles a batch so that one poisoned event cannot stop the reactor (docs/operations.md#isolated-work): a transient
 * error (the database away, a concurrent writer) ends the batch, which the runner delivers again from the
 * checkpoint; any other error sends the batch through event by event, each tried `tries` times, and an event that
 * fails every time is isolated (a row in `isolated_work`, a log line, a metric) while the others are handled.
 */
async function handleIsolating(
  reactor: Reactor,
  name: string,
  batch: readonly RecordedEvent[],
  isolation: WorkIsolation,
  o: { tries: number; delayMs: number },
): Promise<void> {
  try {
    await reactor.handleBatch(batch);
    return;
  } catch (err) {
    if (isTransient(err) || batch.length === 0) throw err;
  }
  for (const e of batch) {
    for (let attempt = 1; ; attempt++) {
      try {
        await reactor.handleBatch([e]);
        break;
      } catch (err) {
        if (isTransient(err)) throw err;
        if (attempt >= o.tries) {
          await isolation.isolate(
            {
              consumer: name,
              item: e.id,
              stream: e.streamName,
              eventType: e.type,
              checkpoint: e.checkpoint,
              accountId: e.metadata.accountId,
              tries: attempt,
            },
            err,
          );
          break;
        }
        await new Promise((r) => setTimeout(r, o.delayMs * attempt));
      }
    }
  }
}

/**
 * Where a new checkpoint of a reactor starts: at the oldest checkpoint the reactor had before this partitioning
 * (unpartitioned, or split into another number of partitions, which hash streams differently), or that a reactor it
 * replaces had (in any partitioning); at the start of the log when none ran. Its siblings of the same partitioning do
 * not count: they may be ahead, on other streams.
 */
async function seedOf(db: Kysely<ReadDb>, reactor: Reactor, partitions: number): Promise<Checkpoint> {
  const rows = await db.selectFrom('projection_checkpoints').select(['name', 'checkpoint']).where('kind', '=', 'reactor').execute();
  const partitionOfName = (name: string, of: string) => name.startsWith(`${of}#`) && /^#\d+\/\d+$/.test(name.slice(of.length));
  const earlier = (name: string) =>
    name === reactor.name ||
    (partitionOfName(name, reactor.name) && !name.endsWith(`/${partitions}`)) ||
    (reactor.replaces ?? []).some((r) => name === r || partitionOfName(name, r));
  return (
    rows
      .filter((r) => earlier(r.name))
      .map((r) => r.checkpoint)
      .reduce<Checkpoint | null>((min, c) => (min === null || compareCheckpoints(c, min) < 0 ? c : min), null) ?? START
  );
}

import { CommandExecutor } from '../../application/shared/execute.js';
import { ProjectionEngine, ReadModelWaiter } from '../../projections/shared/engine.js';
import { keptReadsOf, NOT_KEPT } from '../../projections/shared/kept-reads.js';
import { LeaseRenewals } from '../../projections/shared/lease-renewals.js';
import { Sha256ApiKeySecrets } from '../adapters/api-key-secrets.js';
import { RandomIds } from '../adapters/random-ids.js';
import { SystemClock } from '../adapters/system-clock.js';
import type { Capability } from '../capabilities/capability.js';
import { EmbeddedMaintenance } from '../db/embedded-maintenance.js';
import * as m001 from '../db/migrations/001-event-store.js';
import * as m002 from '../db/migrations/002-read-models.js';
import * as m022 from '../db/migrations/022-reactors.js';
import * as m024 from '../db/migrations/024-one-checkpoint-table.js';
import * as m140 from '../db/migrations/140-append-function.js';
import * as m141 from '../db/migrations/141-aggregate-snapshots.js';
import * as m143 from '../db/migrations/143-isolated-work.js';
import * as m145 from '../db/migrations/145-events-statistics.js';
import * as m146 from '../db/migrations/146-append-many-one-pass.js';
import { InProcessSignals, PgNotifySignals } from '../event-store/append-signals.js';
import { EsdbEventStore } from '../event-store/esdb-event-store.js';
import { KyselySnapshotStore } from '../event-store/kysely-snapshot-store.js';
import { PgEventStore } from '../event-store/pg-event-store.js';
import { SANDBOX } from '../sandbox/tokens.js';
import { PLATFORM } from './tokens.js';

/** The answers kept of each read model (docs/event-store.md#kept-reads) at most, and for how long at most. */
const KEPT_READS = 10_000;
const KEPT_READ_MS = 60_000;
/** embedded, how long the checkpoint of batches that touched nothing waits to be stored (docs/event-store.md#untouched-batches) */
const UNTOUCHED_STORE_MS = 250;

/**
 * What every capability stands on: time, ids, the event store (PostgreSQL table or EventStoreDB), the projection
 * engine with read-your-writes, the one command path, and API key hashing. The composition root binds the
 * configuration, the logger, the database and the gathered projectors before any module.
 */
export const platform = {
  name: 'platform',
  bind: (b, cfg) => {
    // a test may have bound a movable clock already
    if (!b.isBound(PLATFORM.BaseClock)) b.toClass(PLATFORM.BaseClock, SystemClock);
    // in sandbox mode time can be moved forward (docs/sandbox.md#sandbox-clock): the sandbox kit binds and starts that clock
    b.alias(PLATFORM.Clock, cfg.PROVIDER_MODE === 'sandbox' ? SANDBOX.Clock : PLATFORM.BaseClock);
    b.toClass(PLATFORM.Ids, RandomIds);
    b.toClass(PLATFORM.ApiKeySecrets, Sha256ApiKeySecrets);
    // on a server, other processes append and project too: they are heard through LISTEN/NOTIFY; embedded, there are none
    b.factory(PLATFORM.AppendSignals, (r) =>
      cfg.DATABASE_URL ? new PgNotifySignals(cfg.DATABASE_URL, r(PLATFORM.Logger)) : new InProcessSignals(),
    );
    b.factory(PLATFORM.EventStore, (r) => {
      if (cfg.EVENTSTORE_URL) return new EsdbEventStore(cfg.EVENTSTORE_URL);
      const { db, kind } = r(PLATFORM.Database);
      const embedded = kind === 'pglite';
      return new PgEventStore(db, r(PLATFORM.Clock), {
        pollIntervalMs: cfg.EVENT_POLL_INTERVAL_MS,
        // embedded, one thread runs every stage: batches halve the work per event there; on a server, measured, no gain
        batchLingerMs: cfg.EVENT_BATCH_LINGER_MS ?? (embedded ? 4 : 0),
        // appends made in one turn of the event loop go in one statement (docs/event-store.md#appending)
        gatherAppends: true,
        // and the streams read whole in one turn, in one statement (docs/event-store.md#reading-streams)
        gatherReads: true,
        // embedded, this process is the log's only writer: the command path's cache of aggregates is exact
        soleWriter: embedded,
        // PGlite is one session: an append is visible to every reader once it returns
        oneSession: embedded,
        // and the only writer knows which streams exist: one that does not is not read
        knowsStreams: embedded,
        // PGlite runs one statement at a time anyway: appends that wait behind it go together in the next
        appendConcurrency: embedded ? 1 : cfg.EVENT_APPEND_CONCURRENCY,
        signals: r(PLATFORM.AppendSignals),
      });
    });
    b.factory(PLATFORM.LeaseRenewals, (r) => new LeaseRenewals(r(PLATFORM.ReadDb)));
    b.factory(PLATFORM.ProjectionEngine, (r) => {
      const engine = new ProjectionEngine(r(PLATFORM.EventStore), r(PLATFORM.ReadDb), r(PLATFORM.Projectors), r(PLATFORM.Logger), {
        leaseTtlMs: cfg.REACTOR_LEASE_TTL_MS,
        lagMs: cfg.PROJECTION_LAG_MS,
        pipeline: r(PLATFORM.Database).pipeline,
        renewals: r(PLATFORM.LeaseRenewals),
        // embedded, a batch that neither read nor wrote sends nothing; on a server other processes read the checkpoints
        ...(r(PLATFORM.Database).kind === 'pglite' ? { storeUntouchedAfterMs: UNTOUCHED_STORE_MS } : {}),
      });
      // every committed batch is told to whatever waits on read models, in this process and the others
      const signals = r(PLATFORM.AppendSignals);
      engine.onAdvanced((projector, checkpoint, types) => signals.publishProjected({ projector, checkpoint, types }));
      return engine;
    });
    // embedded, every projector runs here and tells each batch it commits
    const hearsEveryAdvance = !cfg.DATABASE_URL && (cfg.ROLE === 'all' || cfg.ROLE === 'worker');
    b.factory(PLATFORM.ReadModels, (r) => r(PLATFORM.ReadModelWaiter));
    b.factory(
      PLATFORM.ReadModelWaiter,
      (r) =>
        new ReadModelWaiter(
          r(PLATFORM.ReadDb),
          r(PLATFORM.Projectors),
          (fn) => r(PLATFORM.AppendSignals).listenProjected((n) => fn(n.projector, n.checkpoint)),
          // a wait need not read their checkpoints
          { timeoutMs: cfg.READ_MODEL_TIMEOUT_MS, hearsEveryAdvance },
        ),
    );
    // on a server, a process that runs the projectors keeps a projector's reads while it holds that projector's lease
    const runsProjectors = cfg.ROLE === 'all' || cfg.ROLE === 'worker';
    b.factory(PLATFORM.KeptReads, (r) =>
      runsProjectors
        ? keptReadsOf(
            (fn) => r(PLATFORM.AppendSignals).listenProjected((n) => fn(n.projector)),
            { maxEntries: KEPT_READS, maxAgeMs: KEPT_READ_MS, now: () => r(PLATFORM.Clock).now().getTime() },
            // the lease's times are real elapsed time, as the database measures them between processes, which the
            // Clock (movable in tests) is not for
            hearsEveryAdvance ? undefined : { now: () => performance.now(), listen: (fn) => r(PLATFORM.ProjectionEngine).onLease(fn) },
          )
        : () => NOT_KEPT,
    );
    b.factory(
      PLATFORM.Executor,
      (r) =>
        new CommandExecutor(
          r(PLATFORM.EventStore),
          r(PLATFORM.Ids),
          r(PLATFORM.Clock),
          r(PLATFORM.ReadModels),
          new KyselySnapshotStore(r(PLATFORM.Database).db),
          cfg.AGGREGATE_CACHE_SIZE,
        ),
    );
  },
  start: async (r) => {
    if (r(PLATFORM.Config).DATABASE_URL) await r(PLATFORM.AppendSignals).start();
  },
  // PGlite has no autovacuum of its own (docs/event-store.md#embedded-maintenance)
  workers: (r, cfg) =>
    r(PLATFORM.Database).kind === 'pglite' && cfg.PGLITE_MAINTENANCE_INTERVAL_MS > 0
      ? [new EmbeddedMaintenance(r(PLATFORM.Database).db, r(PLATFORM.Logger), cfg.PGLITE_MAINTENANCE_INTERVAL_MS)]
      : [],
  // 022 and 024 carry numbers of the numbers range for history's sake: released migrations keep their names
  migrations: {
    '001-event-store': m001,
    '002-read-models': m002,
    '022-reactors': m022,
    '024-one-checkpoint-table': m024,
    '140-append-function': m140,
    '141-aggregate-snapshots': m141,
    '143-isolated-work': m143,
    '145-events-statistics': m145,
    '146-append-many-one-pass': m146,
  },
} as const satisfies Capability;

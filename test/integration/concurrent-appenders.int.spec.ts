import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Kysely, PostgresDialect, type PostgresPoolClient, sql } from 'kysely';
import pg from 'pg';
import {
  type Checkpoint,
  compareCheckpoints,
  type NewEvent,
  parseCheckpoint,
  type RecordedEvent,
  START,
  WrongExpectedRevisionError,
} from '../../application/ports/event-store.port.js';
import { type DatabaseHandle, type Db, openDatabase } from '../../infrastructure/db/database.js';
import { migrateToLatest } from '../../infrastructure/db/migrate.js';
import { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import { ev, seededRandom, TestClock } from '../support/fixtures.js';

/**
 * The PostgreSQL reader never skips a late-committing transaction and delivers each event once
 * (docs/event-store.md).
 *
 * The race tests need two server connections whose transactions overlap, so they run only with
 * DATABASE_URL (PGlite has a single connection: its transactions are serialised and cannot race).
 * The many-appenders test runs everywhere: on PGlite it is trivially serialised, on a server it is not.
 */
const DATABASE_URL = process.env.DATABASE_URL;
const where = DATABASE_URL ? 'postgres server' : 'pglite';

/** A database for these tests: the event tables emptied first when it is a shared server. */
async function openEventDb(poolSize: number): Promise<DatabaseHandle> {
  const handle = await openDatabase({ databaseUrl: DATABASE_URL, poolSize });
  await migrateToLatest(handle.db as never);
  if (handle.kind === 'postgres') await emptyEventTables(handle.db);
  return handle;
}
const emptyEventTables = async (db: Kysely<Db>) => {
  await sql`truncate events, streams restart identity`.execute(db);
};

/**
 * One server connection whose transaction the test controls, with a `PgEventStore` on top of it. The
 * adapter's own `begin`/`commit` are swallowed, so its append runs inside the test's open transaction:
 * the rows it writes are exactly the adapter's (`transaction_id = pg_current_xact_id()`, the `streams`
 * row, ...), and they commit when the test says so. A failed append still rolls the transaction back.
 */
async function controlledConnection(pool: pg.Pool, clock: TestClock) {
  const client = await pool.connect();
  const swallowed = /^\s*(begin|commit)\s*;?\s*$/i;
  const passthrough = {
    query: (text: string, params: readonly unknown[]) =>
      swallowed.test(text) ? Promise.resolve({ command: 'SELECT', rowCount: 0, rows: [] }) : client.query(text, [...params]),
    release: () => undefined,
  } as unknown as PostgresPoolClient;
  const db = new Kysely<Db>({ dialect: new PostgresDialect({ pool: { connect: async () => passthrough, end: async () => undefined } }) });
  return {
    store: new PgEventStore(db, clock),
    begin: async () => {
      await client.query('BEGIN');
    },
    /** assigns this transaction its id now, like any first write would */
    takeXid: async () => BigInt((await client.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')).rows[0]!.xid),
    commit: async () => {
      await client.query('COMMIT');
    },
    rollback: async () => {
      await client.query('ROLLBACK');
    },
    release: async () => {
      await db.destroy();
      client.release();
    },
  };
}
type Controlled = Awaited<ReturnType<typeof controlledConnection>>;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const xidOf = (c: Checkpoint) => parseCheckpoint(c)[0];

describe(`PostgreSQL event store: late-committing transactions (${where})`, () => {
  let handle: DatabaseHandle;
  let store: PgEventStore;
  let raw: pg.Pool;
  let slow: Controlled;
  const clock = new TestClock();
  const callEnded = (id: string): NewEvent => ev('CallEnded', { callId: id });
  const streamsAfter = async (after: Checkpoint) => (await store.readAll({ after })).map((e) => e.streamName);
  /** what a reader guarding only on `global_position > $1` would see: the query R8 forbids */
  const naivelyVisible = async () =>
    (
      await sql<{ stream_name: string }>`select stream_name from events where global_position > 0 order by global_position`.execute(
        handle.db,
      )
    ).rows.map((r) => r.stream_name);

  before(async function () {
    if (!DATABASE_URL) {
      console.log('      (skipped: the race tests need DATABASE_URL — two server connections with overlapping transactions)');
      this.skip();
    }
    handle = await openEventDb(4);
    raw = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  });
  after(async () => {
    await handle?.close();
    await raw?.end();
  });
  // A store per test: emptying the tables under a live store would leave its in-memory log tail
  // (docs/event-store.md#the-log-tail) holding events the table no longer has.
  beforeEach(async () => {
    await emptyEventTables(handle.db);
    store = new PgEventStore(handle.db, clock, { pollIntervalMs: 20 });
    slow = await controlledConnection(raw, clock);
  });
  afterEach(async () => {
    await slow.rollback().catch(() => undefined); // no-op (a warning) when the test already ended it
    await slow.release();
    await store.close();
  });

  it('never skips an event committed late by an older transaction', async () => {
    await slow.begin();
    const slowXid = await slow.takeXid(); // older xid, still open
    const b = await store.appendToStream('call-b', [callEnded('b')], { expectedRevision: 'no_stream' }); // newer xid, commits
    expect(xidOf(b.checkpoint) > slowXid, 'the fast transaction is the newer one').to.equal(true);
    expect(await naivelyVisible(), 'committed, so a position-only reader would already see it').to.deep.equal(['call-b']);
    expect(await streamsAfter(START), 'held back by xmin').to.deep.equal([]);

    await slow.store.appendToStream('call-a', [callEnded('a')], { expectedRevision: 'no_stream' });
    expect(await streamsAfter(START), 'the older transaction is still open').to.deep.equal([]);
    await slow.commit();

    const all = await store.readAll({ after: START });
    expect(
      all.map((e) => e.streamName),
      'both, in xid order',
    ).to.deep.equal(['call-a', 'call-b']);
    const [a, bb] = all as [RecordedEvent, RecordedEvent];
    expect(xidOf(a.checkpoint)).to.equal(slowXid);
    expect(a.globalPosition > bb.globalPosition, 'call-a was written after call-b: xid order, not position order').to.equal(true);
    expect(compareCheckpoints(a.checkpoint, bb.checkpoint)).to.equal(-1);
  });

  it('keeps a resumed cursor behind rows an open transaction wrote at a lower position', async () => {
    await slow.begin();
    await slow.store.appendToStream('call-a', [callEnded('a')], { expectedRevision: 'no_stream' }); // position 1, uncommitted
    await store.appendToStream('call-b', [callEnded('b')], { expectedRevision: 'no_stream' }); // position 2, committed
    // The classic skip: a position cursor would now move to 2 and never read position 1.
    expect(await naivelyVisible()).to.deep.equal(['call-b']);
    expect(await streamsAfter(START)).to.deep.equal([]);
    const cursor = await store.headCheckpoint();
    expect(cursor, 'nothing is visible yet, so a reader checkpoints nothing').to.equal(START);

    await slow.commit();
    expect(await streamsAfter(cursor)).to.deep.equal(['call-a', 'call-b']);
  });

  it('releases the newer events when the older transaction aborts', async () => {
    await slow.begin();
    await slow.takeXid();
    await slow.store.appendToStream('call-a', [callEnded('a')], { expectedRevision: 'no_stream' });
    await store.appendToStream('call-b', [callEnded('b')], { expectedRevision: 'no_stream' });
    expect(await streamsAfter(START)).to.deep.equal([]);
    await slow.rollback();
    expect(await streamsAfter(START)).to.deep.equal(['call-b']);
    expect(await store.readStream('call-a')).to.deep.equal([]);
  });

  it('delivers both to a live subscription, once each, in xid order', async () => {
    const seen: string[] = [];
    const sub = store.subscribe({ after: START, batchSize: 1 }, async (batch) => {
      for (const e of batch) seen.push(e.streamName);
    });
    try {
      await sub.caughtUp;
      await slow.begin();
      await slow.takeXid();
      await store.appendToStream('call-b', [callEnded('b')], { expectedRevision: 'no_stream' });
      await slow.store.appendToStream('call-a', [callEnded('a')], { expectedRevision: 'no_stream' });
      await sleep(150); // several polls and an in-process wake-up: nothing may be delivered yet
      expect(seen).to.deep.equal([]);
      await slow.commit();
      await store.appendToStream('call-c', [callEnded('c')], { expectedRevision: 'no_stream' });
      for (let i = 0; i < 200 && seen.length < 3; i++) await sleep(20);
      await sleep(100); // and nothing twice
      expect(seen).to.deep.equal(['call-a', 'call-b', 'call-c']);
    } finally {
      await sub.stop();
    }
  });
});

describe(`PostgreSQL event store: many concurrent appenders and one subscriber (${where})`, function () {
  this.timeout(60_000);

  const STREAMS = 8;
  const EVENTS_PER_STREAM = 100;
  const MAX_BATCH = 10;
  // plus writers contending for one stream: they read its revision, append, and retry on a conflict,
  // so rolled-back appends (and the gaps they leave in global_position) are part of the race
  const CONTENDERS = 4;
  const EVENTS_PER_CONTENDER = 25;
  const TOTAL = STREAMS * EVENTS_PER_STREAM + CONTENDERS * EVENTS_PER_CONTENDER;

  let handle: DatabaseHandle;
  let store: PgEventStore;

  before(async () => {
    handle = await openEventDb(16); // >= 10 connections: the appenders' transactions really overlap on a server
    store = new PgEventStore(handle.db, new TestClock(), { pollIntervalMs: 20 });
  });
  after(async () => {
    await handle?.close();
  });

  it(`delivers every event of ${STREAMS + CONTENDERS} concurrent appenders exactly once, in revision order per stream`, async () => {
    const seed = Number(process.env.TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const rand = seededRandom(seed);
    const why = `(seed ${seed}; rerun with TEST_SEED=${seed})`;
    const cat = `race${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    const appended = new Set<string>();
    let conflicts = 0;

    const delivered: RecordedEvent[] = [];
    let allSeen!: () => void;
    const done = new Promise<void>((r) => {
      allSeen = r;
    });
    let failed: unknown;
    const sub = store.subscribe(
      {
        after: START,
        batchSize: 50,
        onError: (e) => {
          failed = e;
          allSeen();
        },
      },
      async (batch) => {
        delivered.push(...batch);
        if (delivered.length >= TOTAL) allSeen();
      },
    );

    const dedicated = async (stream: string) => {
      for (let next = 0; next < EVENTS_PER_STREAM; ) {
        const n = Math.min(1 + Math.floor(rand() * MAX_BATCH), EVENTS_PER_STREAM - next);
        const events = Array.from({ length: n }, (_, i) => ev(`${cat}Happened`, { n: next + i }));
        const r = await store.appendToStream(stream, events, { expectedRevision: next === 0 ? 'no_stream' : BigInt(next - 1) });
        expect(r.nextRevision).to.equal(BigInt(next + n - 1));
        for (const e of events) appended.add(e.id);
        next += n;
      }
    };
    const contender = async (stream: string) => {
      for (let left = EVENTS_PER_CONTENDER; left > 0; ) {
        const n = Math.min(1 + Math.floor(rand() * 3), left);
        const events = Array.from({ length: n }, () => ev(`${cat}Contended`));
        const current = (await store.readStream(stream, { direction: 'backwards', maxCount: 1 }))[0]?.streamRevision;
        try {
          await store.appendToStream(stream, events, { expectedRevision: current ?? 'no_stream' });
        } catch (err) {
          if (!(err instanceof WrongExpectedRevisionError)) throw err;
          conflicts++;
          continue; // a fresh batch with new ids, at the new revision
        }
        for (const e of events) appended.add(e.id);
        left -= n;
      }
    };

    const started = Date.now();
    await Promise.all([
      ...Array.from({ length: STREAMS }, (_, i) => dedicated(`${cat}-${i}`)),
      ...Array.from({ length: CONTENDERS }, () => contender(`${cat}-hot`)),
    ]);
    const timeout = setTimeout(allSeen, 20_000);
    await done;
    clearTimeout(timeout);
    await sleep(100); // a few more polls: anything delivered twice would arrive now
    await sub.stop();
    if (failed) throw failed;
    const elapsedMs = Date.now() - started;

    expect(appended.size, `appended ${why}`).to.equal(TOTAL);
    expect(delivered.length, `delivered ${why}`).to.equal(TOTAL);
    const ids = delivered.map((e) => e.id);
    expect(new Set(ids).size, `no event delivered twice ${why}`).to.equal(TOTAL);
    expect(
      ids.every((id) => appended.has(id)),
      `only appended events ${why}`,
    ).to.equal(true);

    const revisions = new Map<string, bigint[]>();
    for (const e of delivered) revisions.set(e.streamName, [...(revisions.get(e.streamName) ?? []), e.streamRevision]);
    expect([...revisions.keys()].sort()).to.deep.equal([...Array.from({ length: STREAMS }, (_, i) => `${cat}-${i}`), `${cat}-hot`].sort());
    for (const [stream, revs] of revisions) {
      const expected = stream.endsWith('-hot') ? CONTENDERS * EVENTS_PER_CONTENDER : EVENTS_PER_STREAM;
      expect(revs, `${stream}: revisions 0..${expected - 1} in order ${why}`).to.deep.equal(
        Array.from({ length: expected }, (_, i) => BigInt(i)),
      );
    }
    for (let i = 1; i < delivered.length; i++) {
      if (compareCheckpoints(delivered[i - 1]!.checkpoint, delivered[i]!.checkpoint) !== -1) {
        expect.fail(`checkpoints not strictly increasing at ${i}: ${delivered[i - 1]!.checkpoint} then ${delivered[i]!.checkpoint} ${why}`);
      }
    }

    // A reader that pages through $all afterwards sees the same log in the same order.
    const paged: string[] = [];
    for (let after = START; ; ) {
      const page = await store.readAll({ after, maxCount: 97 });
      paged.push(...page.map((e) => e.id));
      if (page.length < 97) break;
      after = page[page.length - 1]!.checkpoint;
    }
    expect(paged, `paged readAll equals the subscription's order ${why}`).to.deep.equal(ids);

    if (process.env.TEST_VERBOSE) console.log(`      ${TOTAL} events, ${conflicts} conflicts retried, ${elapsedMs} ms ${why}`);
  });
});

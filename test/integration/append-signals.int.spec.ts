import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { type RecordedEvent, START, type Subscription } from '../../application/ports/event-store.port.js';
import { type DatabaseHandle, openDatabase } from '../../infrastructure/db/database.js';
import { APPLICATION_NAME, type AppendSignals, NOTICE_CHANNEL, PgNotifySignals } from '../../infrastructure/event-store/append-signals.js';
import { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import { createLogger } from '../../infrastructure/logger.js';
import { costMetrics } from '../../infrastructure/observability/metrics.js';
import { ev, TestClock } from '../support/fixtures.js';
import { freshDatabase } from '../support/stores.js';
import { eventually } from '../support/webhook-receiver.js';

/**
 * Append notices wake subscriptions at once; the poll is only the safety net (docs/event-store.md#wake-ups).
 * Every test here gives the subscriber a poll far longer than the test's own timeout where it proves a wake-up,
 * so an event can only arrive in time through a notice; where a notice is lost, the poll is short and the
 * event must still arrive.
 */
const DATABASE_URL = process.env.DATABASE_URL;
const NEVER_MS = 600_000;

/** Signals that hear nothing and tell nobody: every notice is lost. */
const deaf: AppendSignals = {
  start: async () => undefined,
  publish: () => undefined,
  listen: () => () => undefined,
  publishProjected: () => undefined,
  listenProjected: () => () => undefined,
  publishFreed: () => undefined,
  listenFreed: () => () => undefined,
  close: async () => undefined,
};

function collect(
  store: PgEventStore,
  name?: string,
): { events: RecordedEvent[]; sub: Subscription; arrived: (stream: string) => Promise<RecordedEvent> } {
  const events: RecordedEvent[] = [];
  const waiters: { stream: string; resolve: (e: RecordedEvent) => void }[] = [];
  const sub = store.subscribe({ after: START, ...(name ? { name } : {}) }, async (batch) => {
    for (const e of batch) {
      events.push(e);
      for (const w of waiters.filter((x) => x.stream === e.streamName)) w.resolve(e);
    }
  });
  const arrived = (stream: string) =>
    new Promise<RecordedEvent>((resolve) => {
      const e = events.find((x) => x.streamName === stream);
      if (e) resolve(e);
      else waiters.push({ stream, resolve });
    });
  return { events, sub, arrived };
}
const append = (store: PgEventStore, stream: string) =>
  store.appendToStream(stream, [ev('CallEnded', { n: 1 })], { expectedRevision: 'no_stream' });

/** A subscription's reads of the log that found none of its events, as `/metrics` counts them. */
const emptyReads = async (name: string): Promise<number> =>
  (await costMetrics.subscriptionReads.get()).values.find((v) => v.labels.subscription === name && v.labels.result === 'empty')?.value ?? 0;

describe('append notices and the safety poll (docs/event-store.md#wake-ups)', function () {
  this.timeout(60_000);

  it('delivers an event whose notice was lost, at the next poll', async () => {
    const handle = await freshDatabase();
    const store = new PgEventStore(handle.db, new TestClock(), { pollIntervalMs: 200, signals: deaf });
    const { sub, arrived } = collect(store);
    try {
      await sub.caughtUp;
      const stream = `call-${randomUUID()}`;
      await append(store, stream);
      expect((await arrived(stream)).type).to.equal('CallEnded');
    } finally {
      await sub.stop();
      await store.close();
      await handle.close();
    }
  });

  describe('between processes on a server', () => {
    type Proc = { handle: DatabaseHandle; signals: PgNotifySignals; store: PgEventStore };
    let a: Proc;
    let b: Proc;
    /** two "processes": separate pools and separate listening connections on one database */
    const proc = async (pollIntervalMs: number) => {
      const handle = await openDatabase({ databaseUrl: DATABASE_URL, poolSize: 4 });
      const signals = new PgNotifySignals(DATABASE_URL!, createLogger('silent'));
      await signals.start();
      return { handle, signals, store: new PgEventStore(handle.db, new TestClock(), { pollIntervalMs, signals }) };
    };
    /**
     * Two processes that know of each other. A process that starts listening says so on the channel, and the others
     * learn it when that hello reaches their connection, which the server sends on in its own time; until then their
     * notices are heard by nobody (the safety poll covers that, docs/event-store.md#wake-ups). Notices reach a
     * listener in the order they were sent, so once a hears a notice of b's, it has heard b's hello before it; b saw
     * a's connection listening when it started.
     */
    const pair = async (bPollIntervalMs = NEVER_MS) => {
      a = await proc(NEVER_MS);
      b = await proc(bPollIntervalMs);
      let heard = false;
      const off = a.signals.listenProjected((n) => {
        if (n.projector === 'pair_check') heard = true;
      });
      try {
        let n = 0;
        await eventually(
          () => {
            b.signals.publishProjected({ projector: 'pair_check', checkpoint: `${++n}/0` });
            return heard;
          },
          10_000,
          'a hears b',
        );
      } finally {
        off();
      }
    };
    before(async function () {
      if (!DATABASE_URL) this.skip();
      const h = await freshDatabase();
      await h.close();
    });
    afterEach(async () => {
      for (const p of [a, b]) {
        await p?.store.close();
        await p?.handle.close();
      }
    });

    it("hears another process's append through LISTEN/NOTIFY, with a poll that would never come in time", async () => {
      await pair();
      const { sub, arrived } = collect(b.store);
      try {
        await sub.caughtUp;
        const stream = `call-${randomUUID()}`;
        await append(a.store, stream);
        expect((await arrived(stream)).streamName).to.equal(stream);
      } finally {
        await sub.stop();
      }
    });

    it('delivers a notified event that an older open transaction held back, once that one ends, without a notice of its own', async () => {
      await pair();
      const name = `held-back-${randomUUID()}`;
      const { sub, events, arrived } = collect(b.store, name);
      const older = new pg.Client({ connectionString: DATABASE_URL });
      await older.connect();
      try {
        await sub.caughtUp;
        await older.query('begin');
        await older.query('select pg_current_xact_id()'); // an older transaction id, still open: it holds the horizon
        const stream = `call-${randomUUID()}`;
        const heard = new Promise<void>((resolve) => {
          const off = b.signals.listen((n) => {
            if (n.types?.includes('CallEnded')) {
              off();
              resolve();
            }
          });
        });
        await append(a.store, stream); // committed and notified, but not visible to readers yet
        await heard;
        // the subscriber has read after the notice, and found nothing visible: while the event stays hidden it reads
        // again and again (docs/event-store.md#wake-ups), so a read counted after this one is such a read
        const atNotice = await emptyReads(name);
        await eventually(async () => ((await emptyReads(name)) > atNotice ? true : undefined), 20_000);
        const before = events.filter((e) => e.streamName === stream).length;
        await older.query('commit'); // ends without any append, so no notice: only the subscriber's own retries see it
        expect((await arrived(stream)).streamName).to.equal(stream);
        expect(before).to.equal(0);
      } finally {
        await older.end();
        await sub.stop();
      }
    });

    it('keeps delivering when its listening connection is cut: the poll covers the gap and the notices come back', async () => {
      await pair(300);
      const { sub, arrived } = collect(b.store);
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      try {
        await sub.caughtUp;
        await admin.query(
          'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()',
          [APPLICATION_NAME],
        );
        const first = `call-${randomUUID()}`;
        await append(a.store, first);
        await arrived(first);
        const second = `call-${randomUUID()}`;
        await append(a.store, second);
        await arrived(second);
      } finally {
        await admin.end();
        await sub.stop();
      }
    });

    it('hears its own append once: the notice its connection gets back from PostgreSQL is dropped', async () => {
      await pair();
      const heardByA: string[] = [];
      const offA = a.signals.listen((n) => heardByA.push(n.checkpoint));
      const hears = (signals: PgNotifySignals, checkpoint: string) =>
        new Promise<void>((resolve) => {
          const off = signals.listen((n) => {
            if (n.checkpoint === checkpoint) {
              off();
              resolve();
            }
          });
        });
      try {
        const stream = `call-${randomUUID()}`;
        const bHearsIt = (await a.store.appendToStream(stream, [ev('CallEnded', { n: 1 })], { expectedRevision: 'no_stream' })).checkpoint;
        await hears(b.signals, bHearsIt);
        // notices reach a listener in the order their NOTIFYs committed: once a hears b's, its own would have come back
        const reply = await b.store.appendToStream(`call-${randomUUID()}`, [ev('CallEnded', { n: 2 })], { expectedRevision: 'no_stream' });
        await eventually(() => heardByA.includes(reply.checkpoint), 10_000, "a hears b's append");
        expect(heardByA.filter((c) => c === bHearsIt)).to.have.length(1);
      } finally {
        offA();
      }
    });

    it('notifies nothing while no other process listens on its database, and again once one says it listens', async () => {
      // a database of its own: no process of another test or stage listens there. A platform process on the shared
      // database listens on the same channel name, and must not count: a NOTIFY reaches its own database only.
      const name = `notices_${randomUUID().replaceAll('-', '')}`;
      const url = new URL(DATABASE_URL!);
      url.pathname = `/${name}`;
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      await admin.query(`create database ${name}`);
      const elsewhere = new PgNotifySignals(DATABASE_URL!, createLogger('silent'));
      // an onlooker on the channel that is not a process of the platform (another application_name): it sees every
      // notice sent, and is not counted as a listener
      const onlooker = new pg.Client({ connectionString: url.href, application_name: 'notice-onlooker' });
      const seen: { pid: number; payload: string }[] = [];
      onlooker.on('notification', (m) => seen.push({ pid: m.processId, payload: m.payload ?? '' }));
      const started: PgNotifySignals[] = [elsewhere];
      const start = async () => {
        const s = new PgNotifySignals(url.href, createLogger('silent'));
        started.push(s);
        await s.start();
        return s;
      };
      const notice = (n: number) => ({ checkpoint: `${n}/0`, types: ['CallEnded'], categories: ['call'] });
      try {
        await elsewhere.start();
        await onlooker.connect();
        await onlooker.query(`listen ${NOTICE_CHANNEL}`);
        const first = await start();
        const mine = 'select pid from pg_stat_activity where application_name = $1 and datname = $2';
        const firstPid = (await onlooker.query<{ pid: number }>(mine, [APPLICATION_NAME, name])).rows[0]!.pid;
        first.publish(notice(1));
        first.publishProjected({ projector: 'webhook_deliveries_v1', checkpoint: notice(1).checkpoint });
        first.publishFreed('lease-alone');
        // a second process starts listening: the first hears it say so, and its notices reach it from then on
        const second = await start();
        const heard: string[] = [];
        second.listen((n) => heard.push(n.checkpoint));
        let n = 1;
        await eventually(
          () => {
            n += 1;
            first.publish(notice(n));
            return heard.length > 0;
          },
          10_000,
          'the second process hears the first',
        );
        await eventually(() => seen.some((m) => m.pid === firstPid && m.payload.includes(heard[0]!)), 10_000, 'the onlooker sees it too');
        // notices reach a listener in the order they were sent: what the first sent alone would have come before
        const fromFirst = seen.filter((m) => m.pid === firstPid).map((m) => m.payload);
        expect(fromFirst.filter((p) => p.includes(notice(1).checkpoint) || p.includes('lease-alone'))).to.deep.equal([]);
        expect(seen.filter((m) => m.pid !== firstPid).map((m) => m.payload)).to.include(JSON.stringify({ h: 1 }));
      } finally {
        for (const s of started) await s.close();
        await onlooker.end();
        await admin.query(`drop database ${name} with (force)`);
        await admin.end();
      }
    });

    it('tells the other processes that a projector advanced (their read-your-writes and delivery workers wake on it)', async () => {
      await pair();
      const heard = new Promise<string>((resolve) => {
        const off = b.signals.listenProjected((n) => {
          if (n.projector === 'webhook_deliveries_v1') {
            off();
            resolve(n.checkpoint);
          }
        });
      });
      a.signals.publishProjected({ projector: 'webhook_deliveries_v1', checkpoint: '42/7' });
      expect(await heard).to.equal('42/7');
    });
  });
});

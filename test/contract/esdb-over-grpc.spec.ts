import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  compareCheckpoints,
  type EventFilter,
  type RecordedEvent,
  START,
  WrongExpectedRevisionError,
} from '../../application/ports/event-store.port.js';
import { EsdbEventStore } from '../../infrastructure/event-store/esdb-event-store.js';
import { upcasters } from '../../infrastructure/event-store/upcasters.js';
import { type EsdbTestServer, startEsdbTestServer } from '../support/esdb-test-server/server.js';
import { ev } from '../support/fixtures.js';

/**
 * The EventStoreDB adapter against the protocol-level test server (test/support/esdb-test-server): the real
 * `@eventstore/db-client` talking gRPC to an in-memory EventStoreDB stand-in. Runs when EVENTSTORE_URL is not
 * set; with it set, the contract suite runs against that server instead and this file is skipped (it needs to
 * drop connections and play older server versions, which only the test server can do).
 */
const describeWithoutServer = process.env.EVENTSTORE_URL ? describe.skip : describe;

describeWithoutServer('EventStoreDB adapter over gRPC (test server)', () => {
  let server: EsdbTestServer;
  let store: EsdbEventStore;
  let cat: string;
  let T: (name: string) => string;
  const s = (id: string) => `${cat}-${id}`;
  const types = (es: readonly RecordedEvent[]) => es.map((e) => e.type);
  const caught = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (e: unknown) => e,
    );

  before(async () => {
    server = await startEsdbTestServer();
    store = new EsdbEventStore(server.url, { reconnect: { maxAttempts: 5, baseDelayMs: 10 }, caughtUpProbeMs: 50 });
  });
  after(async () => {
    await store.close();
    await server.stop();
  });
  beforeEach(() => {
    cat = `g${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    T = (name) => `${cat}${name}`;
  });

  describe('append', () => {
    it('numbers revisions from 0 and maps every kind of conflict to WrongExpectedRevisionError with the actual revision', async () => {
      expect((await store.appendToStream(s('a'), [ev(T('A')), ev(T('B'))], { expectedRevision: 'no_stream' })).nextRevision).to.equal(1n);

      const again = await caught(store.appendToStream(s('a'), [ev(T('C'))], { expectedRevision: 'no_stream' }));
      expect(again)
        .to.be.instanceOf(WrongExpectedRevisionError)
        .and.include({ stream: s('a'), expected: 'no_stream', actual: 1n });

      const stale = await caught(store.appendToStream(s('a'), [ev(T('C'))], { expectedRevision: 0n }));
      expect(stale).to.be.instanceOf(WrongExpectedRevisionError).and.include({ expected: 0n, actual: 1n });

      const missing = await caught(store.appendToStream(s('none'), [ev(T('C'))], { expectedRevision: 3n }));
      expect(missing).to.be.instanceOf(WrongExpectedRevisionError).and.include({ actual: 'no_stream' });

      const notThere = await caught(store.appendToStream(s('none'), [ev(T('C'))], { expectedRevision: 'stream_exists' }));
      expect(notThere).to.be.instanceOf(WrongExpectedRevisionError).and.include({ expected: 'stream_exists', actual: 'no_stream' });

      expect((await store.appendToStream(s('a'), [ev(T('C'))], { expectedRevision: 1n })).nextRevision).to.equal(2n);
      expect((await store.appendToStream(s('a'), [ev(T('D'))], { expectedRevision: 'stream_exists' })).nextRevision).to.equal(3n);
      expect((await store.appendToStream(s('a'), [ev(T('E'))], { expectedRevision: 'any' })).nextRevision).to.equal(4n);
      expect(types(await store.readStream(s('a')))).to.deep.equal(['A', 'B', 'C', 'D', 'E'].map(T));
    });

    it('is idempotent by event id: a retried batch returns the first result and is stored once', async () => {
      const batch = [ev(T('A')), ev(T('B'))];
      const first = await store.appendToStream(s('a'), batch, { expectedRevision: 'no_stream' });
      const retried = await store.appendToStream(s('a'), batch, { expectedRevision: 'no_stream' });
      const retriedAny = await store.appendToStream(s('a'), batch, { expectedRevision: 'any' });
      expect(retried).to.deep.equal(first);
      expect(retriedAny).to.deep.equal(first);
      expect(await store.readStream(s('a'))).to.have.length(2);
      // the same first id followed by a new one is not a retry
      const partial = await caught(store.appendToStream(s('a'), [batch[0]!, ev(T('C'))], { expectedRevision: 'no_stream' }));
      expect(partial).to.be.instanceOf(WrongExpectedRevisionError);
    });

    it('returns the checkpoint of the last event, which readAll and headCheckpoint reach', async () => {
      const r = await store.appendToStream(s('a'), [ev(T('A')), ev(T('B'))], { expectedRevision: 'no_stream' });
      const all = await store.readAll({ filter: { streamCategories: [cat] } });
      expect(all.at(-1)!.checkpoint).to.equal(r.checkpoint);
      expect(compareCheckpoints(await store.headCheckpoint(), r.checkpoint)).to.be.at.least(0);
    });

    it('writes JSON data and metadata with schemaVersion 1 by default, and upcasts on read', async () => {
      const type = T('Renamed');
      (upcasters as Record<string, (d: Record<string, unknown>, v: number) => Record<string, unknown>>)[type] = (d, v) =>
        v >= 2 ? d : { name: d.oldName };
      try {
        await store.appendToStream(s('u'), [ev(type, { oldName: 'x' })], { expectedRevision: 'no_stream' });
        const v2 = { ...ev(type, { name: 'y' }), metadata: { ...ev(type).metadata, schemaVersion: 2 } };
        await store.appendToStream(s('u'), [v2], { expectedRevision: 0n });
        const [old, current] = await store.readStream(s('u'));
        expect(old!.metadata.schemaVersion).to.equal(1);
        expect(old!.data).to.deep.equal({ name: 'x' });
        expect(current!.data).to.deep.equal({ name: 'y' });
        expect((await store.readAll({ filter: { eventTypes: [type] } })).map((e) => e.data)).to.deep.equal([{ name: 'x' }, { name: 'y' }]);
      } finally {
        delete (upcasters as Record<string, unknown>)[type];
      }
    });

    it('maps conflicts the same way through the older Append call (servers without BatchAppend)', async () => {
      const legacy = await startEsdbTestServer({ batchAppend: false, caughtUp: false });
      const old = new EsdbEventStore(legacy.url);
      try {
        expect((await old.appendToStream(s('a'), [ev(T('A'))], { expectedRevision: 'no_stream' })).nextRevision).to.equal(0n);
        const err = await caught(old.appendToStream(s('a'), [ev(T('B'))], { expectedRevision: 'no_stream' }));
        expect(err).to.be.instanceOf(WrongExpectedRevisionError).and.include({ actual: 0n });
        const missing = await caught(old.appendToStream(s('b'), [ev(T('B'))], { expectedRevision: 'stream_exists' }));
        expect(missing).to.be.instanceOf(WrongExpectedRevisionError).and.include({ actual: 'no_stream' });
      } finally {
        await old.close();
        await legacy.stop();
      }
    });
  });

  describe('read', () => {
    const is = (es: RecordedEvent[]) => es.map((e) => (e.data as { i: number }).i);

    it('reads a stream both ways, from a revision, with a max count; a missing stream is empty', async () => {
      await store.appendToStream(
        s('r'),
        [0, 1, 2, 3, 4].map((i) => ev(T('N'), { i })),
        { expectedRevision: 'no_stream' },
      );
      expect(is(await store.readStream(s('r')))).to.deep.equal([0, 1, 2, 3, 4]);
      expect(is(await store.readStream(s('r'), { fromRevision: 1n, maxCount: 2 }))).to.deep.equal([1, 2]);
      expect(is(await store.readStream(s('r'), { direction: 'backwards', maxCount: 2 }))).to.deep.equal([4, 3]);
      expect(is(await store.readStream(s('r'), { direction: 'backwards', fromRevision: 2n }))).to.deep.equal([2, 1, 0]);
      expect(await store.readStream(s('missing'))).to.deep.equal([]);
    });

    it('reads $all strictly after a checkpoint, filtered by category or exact type, without system events', async () => {
      await store.appendToStream(s('1'), [ev(T('A'))], { expectedRevision: 'no_stream' });
      await store.appendToStream(`o${cat}-1`, [ev(T('A'))], { expectedRevision: 'no_stream' }); // another category
      await store.appendToStream(`$${cat}-sys`, [ev(T('A'))], { expectedRevision: 'no_stream' }); // a system stream
      await store.appendToStream(s('2'), [ev(T('AB')), ev(`$${T('Sys')}`)], { expectedRevision: 'no_stream' }); // a prefix twin, a system type
      await store.appendToStream(s('1'), [ev(T('C'))], { expectedRevision: 0n });

      const byCat = await store.readAll({ filter: { streamCategories: [cat] } });
      expect(types(byCat)).to.deep.equal(['A', 'AB', 'C'].map(T));
      expect(types(await store.readAll({ after: byCat[0]!.checkpoint, filter: { streamCategories: [cat] } }))).to.deep.equal(
        ['AB', 'C'].map(T),
      );
      expect(types(await store.readAll({ after: byCat[2]!.checkpoint, filter: { streamCategories: [cat] } }))).to.deep.equal([]);
      expect(types(await store.readAll({ filter: { eventTypes: [T('A'), T('C')] } }))).to.deep.equal(['A', 'A', 'C'].map(T));
      const unfiltered = await store.readAll({ after: byCat[0]!.checkpoint, maxCount: 100 });
      expect(unfiltered.filter((e) => e.streamName.includes(cat)).map((e) => `${e.streamName}:${e.type}`)).to.deep.equal([
        `o${cat}-1:${T('A')}`,
        `${s('2')}:${T('AB')}`,
        `${s('1')}:${T('C')}`,
      ]);
      expect(await store.readAll({ filter: { eventTypes: [] } })).to.deep.equal([]);
    });

    it('fills maxCount even when the client drops what the server filter let through', async () => {
      await store.appendToStream(s('1'), [ev(T('A')), ev(`$${T('Sys')}`), ev(`$${T('Sys')}`), ev(T('B')), ev(T('C'))], {
        expectedRevision: 'no_stream',
      });
      expect(types(await store.readAll({ filter: { streamCategories: [cat] }, maxCount: 2 }))).to.deep.equal(['A', 'B'].map(T));
      const [first] = await store.readAll({ filter: { streamCategories: [cat] }, maxCount: 1 });
      expect(types(await store.readAll({ after: first!.checkpoint, filter: { streamCategories: [cat] }, maxCount: 2 }))).to.deep.equal(
        ['B', 'C'].map(T),
      );
    });

    it('puts the head at the newest user event, skipping system events, and at START on an empty store', async () => {
      const r = await store.appendToStream(s('1'), [ev(T('A'))], { expectedRevision: 'no_stream' });
      await store.appendToStream(`$${cat}`, [ev('$metadata')], { expectedRevision: 'any' });
      expect(await store.headCheckpoint()).to.equal(r.checkpoint);
      const empty = await startEsdbTestServer(); // holds only its seeded system event
      const emptyStore = new EsdbEventStore(empty.url);
      try {
        expect(await emptyStore.headCheckpoint()).to.equal(START);
        expect(await emptyStore.readAll()).to.deep.equal([]);
      } finally {
        await emptyStore.close();
        await empty.stop();
      }
    });
  });

  describe('catch-up subscription', () => {
    /** Collects delivered event types; `until(n)` resolves once n have arrived. */
    const collector = () => {
      const seen: RecordedEvent[] = [];
      const waiting: Array<{ n: number; resolve: () => void }> = [];
      return {
        seen,
        handler: async (batch: readonly RecordedEvent[]) => {
          seen.push(...batch);
          for (const w of waiting) if (seen.length >= w.n) w.resolve();
        },
        until: (n: number) =>
          new Promise<void>((resolve) => {
            if (seen.length >= n) resolve();
            else waiting.push({ n, resolve });
          }),
      };
    };

    it('delivers the backlog in order, reports caught up, then delivers live events', async () => {
      await store.appendToStream(s('1'), [ev(T('A')), ev(T('B'))], { expectedRevision: 'no_stream' });
      await store.appendToStream(`o${cat}-1`, [ev(T('X'))], { expectedRevision: 'no_stream' });
      const c = collector();
      const sub = store.subscribe({ after: START, filter: { streamCategories: [cat] }, batchSize: 1 }, c.handler);
      await sub.caughtUp;
      expect(types(c.seen)).to.deep.equal(['A', 'B'].map(T));
      await store.appendToStream(s('2'), [ev(T('C')), ev(`$${T('Sys')}`), ev(T('D'))], { expectedRevision: 'no_stream' });
      await c.until(4);
      await sub.stop();
      expect(types(c.seen)).to.deep.equal(['A', 'B', 'C', 'D'].map(T));
      const cps = c.seen.map((e) => e.checkpoint);
      expect(cps.every((cp, i) => i === 0 || compareCheckpoints(cps[i - 1]!, cp) < 0)).to.equal(true);
    });

    it('resumes strictly after a stored checkpoint, with an event-type filter', async () => {
      await store.appendToStream(s('1'), [ev(T('A')), ev(T('B')), ev(T('Skip')), ev(T('C'))], { expectedRevision: 'no_stream' });
      const [a] = await store.readAll({ filter: { streamCategories: [cat] }, maxCount: 1 });
      const c = collector();
      const sub = store.subscribe({ after: a!.checkpoint, filter: { eventTypes: [T('A'), T('B'), T('C')] } }, c.handler);
      await sub.caughtUp;
      await sub.stop();
      expect(types(c.seen)).to.deep.equal(['B', 'C'].map(T));
    });

    it('reports caught up from an empty readAll when the server never sends caught_up', async () => {
      const legacy = await startEsdbTestServer({ caughtUp: false, batchAppend: false });
      const old = new EsdbEventStore(legacy.url, { caughtUpProbeMs: 20 });
      try {
        await old.appendToStream(s('1'), [ev(T('A')), ev(T('B')), ev(T('C'))], { expectedRevision: 'no_stream' });
        const c = collector();
        const sub = old.subscribe({ after: START, filter: { streamCategories: [cat] }, batchSize: 2 }, c.handler);
        await sub.caughtUp;
        expect(types(c.seen)).to.deep.equal(['A', 'B', 'C'].map(T));
        await old.appendToStream(s('1'), [ev(T('D'))], { expectedRevision: 2n });
        await c.until(4);
        await sub.stop();
        expect(types(c.seen)).to.deep.equal(['A', 'B', 'C', 'D'].map(T));
      } finally {
        await old.close();
        await legacy.stop();
      }
    });

    it('stops on a handler error and reports it through onError and caughtUp', async () => {
      await store.appendToStream(s('1'), [ev(T('A')), ev(T('B'))], { expectedRevision: 'no_stream' });
      const boom = new Error('handler failed');
      let reported: unknown;
      let calls = 0;
      const sub = store.subscribe(
        {
          after: START,
          filter: { streamCategories: [cat] },
          batchSize: 1,
          onError: (e) => {
            reported = e;
          },
        },
        async () => {
          calls++;
          throw boom;
        },
      );
      expect(await caught(sub.caughtUp)).to.equal(boom);
      expect(reported).to.equal(boom);
      await store.appendToStream(s('1'), [ev(T('C'))], { expectedRevision: 1n });
      await sub.stop();
      expect(calls).to.equal(1);
    });

    it('survives a connection dropped mid-catch-up: resubscribes from the last handled checkpoint, no loss, no repeats', async () => {
      const filter: EventFilter = { streamCategories: [cat] };
      const pad = 'x'.repeat(4096); // big enough that HTTP/2 flow control holds most of the backlog on the server
      for (let b = 0; b < 20; b++) {
        await store.appendToStream(
          s(String(b)),
          Array.from({ length: 10 }, (_, i) => ev(T('N'), { n: b * 10 + i, pad })),
          { expectedRevision: 'no_stream' },
        );
      }
      const ns = (es: RecordedEvent[]) => es.map((e) => (e.data as { n: number }).n);

      const clean = collector();
      const cleanSub = store.subscribe({ after: START, filter, batchSize: 7 }, clean.handler);
      await cleanSub.caughtUp;
      await cleanSub.stop();
      expect(ns(clean.seen)).to.deep.equal(Array.from({ length: 200 }, (_, i) => i));

      const opened = server.subscriptionsOpened();
      let handledWhenDropped = 0;
      const seen: RecordedEvent[] = [];
      let dropped = false;
      let failure: unknown;
      const sub = store.subscribe(
        {
          after: START,
          filter,
          batchSize: 1,
          onError: (e) => {
            failure = e;
          },
        },
        async (batch) => {
          seen.push(...batch);
          if (seen.length === 50 && !dropped) {
            dropped = true;
            handledWhenDropped = seen.length;
            server.dropSubscriptions();
          }
          await new Promise((r) => setImmediate(r));
        },
      );
      await sub.caughtUp;
      expect(dropped).to.equal(true);
      expect(seen.map((e) => e.id)).to.deep.equal(clean.seen.map((e) => e.id));
      // it really resubscribed, from a checkpoint the handler had finished, in the middle of the backlog
      const starts = server.subscriptionStarts().slice(opened);
      expect(starts[0]).to.equal('start');
      expect(starts.length).to.be.at.least(2);
      const resumedAt = seen.findIndex((e) => e.globalPosition === starts[1]);
      expect(resumedAt)
        .to.be.at.least(handledWhenDropped - 1)
        .and.below(199);

      // and it is live again
      const live = ev(T('Live'), { n: 200 });
      await store.appendToStream(s('live'), [live], { expectedRevision: 'no_stream' });
      while (seen.length < 201) await new Promise((r) => setTimeout(r, 5));
      await sub.stop();
      expect(seen.at(-1)!.id).to.equal(live.id);
      expect(new Set(seen.map((e) => e.id)).size).to.equal(201);
      expect(failure).to.equal(undefined);
    });

    it('gives up through onError after bounded reconnection attempts', async () => {
      const doomed = await startEsdbTestServer();
      const lonely = new EsdbEventStore(doomed.url, { reconnect: { maxAttempts: 2, baseDelayMs: 5 } });
      try {
        let reported!: (e: unknown) => void;
        const gaveUp = new Promise<unknown>((resolve) => {
          reported = resolve;
        });
        const sub = lonely.subscribe({ after: START, onError: (e) => reported(e) }, async () => undefined);
        await sub.caughtUp;
        await doomed.stop();
        expect(await gaveUp).to.be.instanceOf(Error);
        await sub.stop();
      } finally {
        await lonely.close();
      }
    });
  });
});

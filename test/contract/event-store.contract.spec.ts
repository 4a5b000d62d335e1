import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  compareCheckpoints,
  type EventStorePort,
  type RecordedEvent,
  START,
  WrongExpectedRevisionError,
} from '../../application/ports/event-store.port.js';
import { ev, meta } from '../support/fixtures.js';
import { type StoreUnderTest, storeUnderTest } from '../support/stores.js';

/**
 * The event-store port contract. Runs against whichever adapter the environment selects (PostgreSQL tables
 * on PGlite or a server; EventStoreDB when EVENTSTORE_URL is set). Each test uses its own stream category and
 * event-type prefix, so it needs no empty store and runs unchanged against a shared EventStoreDB server.
 */
describe(`event store contract (${process.env.EVENTSTORE_URL ? 'eventstoredb' : process.env.DATABASE_URL ? 'postgres server' : 'pglite'})`, () => {
  let sut: StoreUnderTest;
  let store: EventStorePort;
  let cat: string;
  let T: (name: string) => string;
  const s = (id: string) => `${cat}-${id}`;

  before(async () => {
    sut = await storeUnderTest();
    store = sut.store;
  });
  after(async () => {
    await sut.close();
  });
  beforeEach(() => {
    cat = `t${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    T = (name) => `${cat}${name}`;
  });

  const types = (es: readonly RecordedEvent[]) => es.map((e) => e.type);

  describe('append', () => {
    it('creates a stream with no_stream and numbers revisions from 0', async () => {
      const r = await store.appendToStream(s('a'), [ev(T('A')), ev(T('B'))], { expectedRevision: 'no_stream' });
      expect(r.nextRevision).to.equal(1n);
      const read = await store.readStream(s('a'));
      expect(read.map((e) => e.streamRevision)).to.deep.equal([0n, 1n]);
      expect(types(read)).to.deep.equal([T('A'), T('B')]);
    });

    it('refuses no_stream on an existing stream with the typed error', async () => {
      await store.appendToStream(s('a'), [ev(T('A'))], { expectedRevision: 'no_stream' });
      const err = await store.appendToStream(s('a'), [ev(T('B'))], { expectedRevision: 'no_stream' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(WrongExpectedRevisionError);
      expect((err as WrongExpectedRevisionError).actual).to.equal(0n);
    });

    it('appends at the exact revision and refuses a stale one', async () => {
      await store.appendToStream(s('a'), [ev(T('A'))], { expectedRevision: 'no_stream' });
      const ok = await store.appendToStream(s('a'), [ev(T('B'))], { expectedRevision: 0n });
      expect(ok.nextRevision).to.equal(1n);
      const err = await store.appendToStream(s('a'), [ev(T('C'))], { expectedRevision: 0n }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(WrongExpectedRevisionError);
      expect((err as WrongExpectedRevisionError).actual).to.equal(1n);
    });

    it('refuses an exact revision on a missing stream', async () => {
      const err = await store.appendToStream(s('none'), [ev(T('A'))], { expectedRevision: 3n }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(WrongExpectedRevisionError);
      expect((err as WrongExpectedRevisionError).actual).to.equal('no_stream');
    });

    it('appends with any, whatever the revision', async () => {
      await store.appendToStream(s('a'), [ev(T('A'))], { expectedRevision: 'any' });
      const r = await store.appendToStream(s('a'), [ev(T('B')), ev(T('C'))], { expectedRevision: 'any' });
      expect(r.nextRevision).to.equal(2n);
    });

    it('requires an existing stream with stream_exists', async () => {
      const err = await store.appendToStream(s('a'), [ev(T('A'))], { expectedRevision: 'stream_exists' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(WrongExpectedRevisionError);
      await store.appendToStream(s('a'), [ev(T('A'))], { expectedRevision: 'no_stream' });
      expect((await store.appendToStream(s('a'), [ev(T('B'))], { expectedRevision: 'stream_exists' })).nextRevision).to.equal(1n);
    });

    it('is idempotent by event id: the same batch appended twice is stored once', async () => {
      const batch = [ev(T('A')), ev(T('B'))];
      const first = await store.appendToStream(s('a'), batch, { expectedRevision: 'no_stream' });
      const again = await store.appendToStream(s('a'), batch, { expectedRevision: 'no_stream' });
      expect(again.nextRevision).to.equal(first.nextRevision);
      expect(await store.readStream(s('a'))).to.have.length(2);
    });

    it('numbers and orders the events of short and long appends alike, their data whole (docs/event-store.md#appending)', async () => {
      // the PostgreSQL store sends up to 32 events of a stream as a plain statement and more through its function
      const batch = (n: number, tag: string) =>
        Array.from({ length: n }, (_, i) => ev(T(`${tag}${i % 3}`), { i, tag, text: `‘${tag}’ \\ "${i}" 🙂`, list: [i, null, { tag }] }));
      const long = batch(40, 'L');
      const short = batch(3, 'S');
      const one = batch(1, 'O');
      expect((await store.appendToStream(s('a'), long, { expectedRevision: 'no_stream' })).nextRevision).to.equal(39n);
      expect((await store.appendToStream(s('a'), short, { expectedRevision: 39n })).nextRevision).to.equal(42n);
      expect((await store.appendToStream(s('a'), one, { expectedRevision: 'stream_exists' })).nextRevision).to.equal(43n);
      const stale = await store.appendToStream(s('a'), batch(2, 'X'), { expectedRevision: 39n }).catch((e: unknown) => e);
      expect(stale).to.be.instanceOf(WrongExpectedRevisionError);
      expect((stale as WrongExpectedRevisionError).actual).to.equal(43n);
      const read = await store.readStream(s('a'));
      const sent = [...long, ...short, ...one];
      expect(read.map((e) => e.streamRevision)).to.deep.equal(sent.map((_, i) => BigInt(i)));
      expect(read.map((e) => e.id)).to.deep.equal(sent.map((e) => e.id));
      expect(read.map((e) => e.data)).to.deep.equal(sent.map((e) => e.data));
      const all = await store.readAll({ filter: { streamCategories: [cat] } });
      expect(all.map((e) => e.id)).to.deep.equal(sent.map((e) => e.id));
    });

    it('returns a checkpoint that the global read reaches', async () => {
      const r = await store.appendToStream(s('a'), [ev(T('A'))], { expectedRevision: 'no_stream' });
      const all = await store.readAll({ filter: { streamCategories: [cat] } });
      expect(all).to.have.length(1);
      expect(all[0]!.checkpoint).to.equal(r.checkpoint);
      expect(compareCheckpoints(await store.headCheckpoint(), r.checkpoint)).to.be.at.least(0);
    });
  });

  describe('append to several streams at once', () => {
    it('appends each stream as a single append would, answering in order, a conflict in its own place', async () => {
      await store.appendToStream(s('b'), [ev(T('A'))], { expectedRevision: 'no_stream' });
      const out = await store.appendMany([
        { stream: s('c'), events: [ev(T('C1')), ev(T('C2'))], expectedRevision: 'no_stream' },
        { stream: s('b'), events: [ev(T('B1'))], expectedRevision: 5n }, // stale: b is at 0
        { stream: s('a'), events: [ev(T('A1'))], expectedRevision: 'any' },
      ]);
      expect(out[0]).to.include({ nextRevision: 1n });
      expect(out[1]).to.be.instanceOf(WrongExpectedRevisionError);
      expect((out[1] as WrongExpectedRevisionError).actual).to.equal(0n);
      expect(out[2]).to.include({ nextRevision: 0n });
      expect(types(await store.readStream(s('c')))).to.deep.equal([T('C1'), T('C2')]);
      expect(types(await store.readStream(s('b')))).to.deep.equal([T('A')]);
      const all = await store.readAll({ filter: { streamCategories: [cat] }, maxCount: 100 });
      const last = out.filter(
        (r): r is Exclude<(typeof out)[number], WrongExpectedRevisionError> => !(r instanceof WrongExpectedRevisionError),
      );
      for (const r of last) expect(all.some((e) => e.checkpoint === r.checkpoint)).to.equal(true);
    });

    it('is idempotent by event id per stream: a retried batch writes nothing again and answers the same', async () => {
      const batch = [
        { stream: s('a'), events: [ev(T('A'))], expectedRevision: 'no_stream' as const },
        { stream: s('b'), events: [ev(T('B')), ev(T('B2'))], expectedRevision: 'no_stream' as const },
      ];
      const first = await store.appendMany(batch);
      const again = await store.appendMany(batch);
      expect(again).to.deep.equal(first);
      expect(types(await store.readStream(s('b')))).to.deep.equal([T('B'), T('B2')]);
    });

    it('reads several streams in one call, a missing one as empty', async () => {
      await store.appendMany([
        { stream: s('a'), events: [ev(T('A1')), ev(T('A2'))], expectedRevision: 'no_stream' },
        { stream: s('b'), events: [ev(T('B1'))], expectedRevision: 'no_stream' },
      ]);
      const read = await store.readStreams([s('a'), s('b'), s('none')]);
      expect(types(read.get(s('a'))!)).to.deep.equal([T('A1'), T('A2')]);
      expect(read.get(s('a'))!.map((e) => e.streamRevision)).to.deep.equal([0n, 1n]);
      expect(types(read.get(s('b'))!)).to.deep.equal([T('B1')]);
      expect(read.get(s('none'))).to.deep.equal([]);
    });
  });

  describe('recorded events', () => {
    it('carry id, type, data, metadata, stream, revision, position and time', async () => {
      const e = {
        ...ev(T('A'), { n: 1, s: 'x', nested: { ok: true } }),
        metadata: { ...meta('acc_9'), actor: 'key:k1', requestId: 'req_1' },
      };
      await store.appendToStream(s('a'), [e], { expectedRevision: 'no_stream' });
      const [r] = await store.readStream(s('a'));
      expect(r!.id).to.equal(e.id);
      expect(r!.type).to.equal(T('A'));
      expect(r!.data).to.deep.equal({ n: 1, s: 'x', nested: { ok: true } });
      expect(r!.metadata).to.include({ accountId: 'acc_9', actor: 'key:k1', requestId: 'req_1', correlationId: e.metadata.correlationId });
      expect(r!.streamName).to.equal(s('a'));
      expect(r!.streamRevision).to.equal(0n);
      expect(typeof r!.globalPosition).to.equal('bigint');
      expect(Number.isNaN(Date.parse(r!.createdAt))).to.equal(false);
    });
  });

  describe('read stream', () => {
    beforeEach(async () => {
      await store.appendToStream(
        s('r'),
        [0, 1, 2, 3, 4].map((i) => ev(T('N'), { i })),
        { expectedRevision: 'no_stream' },
      );
    });
    const is = (es: RecordedEvent[]) => es.map((e) => (e.data as { i: number }).i);
    it('reads forwards from a revision with a max count', async () => {
      expect(is(await store.readStream(s('r'), { fromRevision: 1n, maxCount: 2 }))).to.deep.equal([1, 2]);
    });
    it('reads backwards from the end and from a revision', async () => {
      expect(is(await store.readStream(s('r'), { direction: 'backwards', maxCount: 2 }))).to.deep.equal([4, 3]);
      expect(is(await store.readStream(s('r'), { direction: 'backwards', fromRevision: 2n }))).to.deep.equal([2, 1, 0]);
    });
    it('reads a missing stream as empty', async () => {
      expect(await store.readStream(s('missing'))).to.deep.equal([]);
    });
  });

  describe('read all', () => {
    it('reads in global order after a checkpoint, with a category filter', async () => {
      await store.appendToStream(s('1'), [ev(T('A'))], { expectedRevision: 'no_stream' });
      await store.appendToStream(`o${cat}-1`, [ev(T('X'))], { expectedRevision: 'no_stream' });
      await store.appendToStream(s('2'), [ev(T('B'))], { expectedRevision: 'no_stream' });
      await store.appendToStream(s('1'), [ev(T('C'))], { expectedRevision: 0n });
      const all = await store.readAll({ filter: { streamCategories: [cat] } });
      expect(types(all)).to.deep.equal([T('A'), T('B'), T('C')]);
      const after = await store.readAll({ after: all[0]!.checkpoint, filter: { streamCategories: [cat] } });
      expect(types(after)).to.deep.equal([T('B'), T('C')]);
      const limited = await store.readAll({ filter: { streamCategories: [cat] }, maxCount: 2 });
      expect(types(limited)).to.deep.equal([T('A'), T('B')]);
    });

    it('filters on event types', async () => {
      await store.appendToStream(s('1'), [ev(T('A')), ev(T('B')), ev(T('C'))], { expectedRevision: 'no_stream' });
      const got = await store.readAll({ filter: { eventTypes: [T('A'), T('C')] } });
      expect(types(got)).to.deep.equal([T('A'), T('C')]);
    });

    it('counts what a filtered read from the start reads', async () => {
      await store.appendToStream(s('1'), [ev(T('A')), ev(T('B')), ev(T('A'))], { expectedRevision: 'no_stream' });
      await store.appendToStream(`o${cat}-1`, [ev(T('A'))], { expectedRevision: 'no_stream' });
      expect(await store.countAll({ filter: { eventTypes: [T('A')] } })).to.equal(3);
      expect(await store.countAll({ filter: { eventTypes: [T('B'), T('C')] } })).to.equal(1);
      expect(await store.countAll({ filter: { streamCategories: [cat] } })).to.equal(3);
      expect(await store.countAll({ filter: { eventTypes: [] } })).to.equal(0);
      expect(await store.readAll({ filter: { eventTypes: [] } })).to.deep.equal([]);
    });
  });

  describe('catch-up subscription', () => {
    it('delivers the backlog, reports caught up, then delivers live events, in order', async () => {
      await store.appendToStream(s('1'), [ev(T('A')), ev(T('B'))], { expectedRevision: 'no_stream' });
      const seen: string[] = [];
      let wake: () => void = () => undefined;
      const sub = store.subscribe({ after: START, filter: { streamCategories: [cat] }, batchSize: 1 }, async (batch) => {
        for (const e of batch) seen.push(e.type);
        wake();
      });
      await sub.caughtUp;
      expect(seen).to.deep.equal([T('A'), T('B')]);
      const live = new Promise<void>((resolve) => {
        wake = () => {
          if (seen.length === 3) resolve();
        };
      });
      await store.appendToStream(s('2'), [ev(T('C'))], { expectedRevision: 'no_stream' });
      await live;
      await sub.stop();
      expect(seen).to.deep.equal([T('A'), T('B'), T('C')]);
    });

    it('resumes after a stored checkpoint without repeating events', async () => {
      await store.appendToStream(s('1'), [ev(T('A')), ev(T('B')), ev(T('C'))], { expectedRevision: 'no_stream' });
      const all = await store.readAll({ filter: { streamCategories: [cat] } });
      const seen: string[] = [];
      const sub = store.subscribe({ after: all[0]!.checkpoint, filter: { streamCategories: [cat] } }, async (batch) => {
        for (const e of batch) seen.push(e.type);
      });
      await sub.caughtUp;
      await sub.stop();
      expect(seen).to.deep.equal([T('B'), T('C')]);
    });

    it('filters live events by type', async () => {
      const seen: string[] = [];
      let done!: () => void;
      const got = new Promise<void>((r) => {
        done = r;
      });
      const sub = store.subscribe({ after: await store.headCheckpoint(), filter: { eventTypes: [T('Keep')] } }, async (batch) => {
        for (const e of batch) seen.push(e.type);
        if (seen.length >= 1) done();
      });
      await sub.caughtUp;
      await store.appendToStream(s('1'), [ev(T('Skip')), ev(T('Keep'))], { expectedRevision: 'no_stream' });
      await got;
      await sub.stop();
      expect(seen).to.deep.equal([T('Keep')]);
    });
  });
});

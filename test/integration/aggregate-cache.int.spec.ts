import { expect } from 'chai';
import type { EventStorePort } from '../../application/ports/event-store.port.js';
import { CommandExecutor, step } from '../../application/shared/execute.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Command, Decider, Event } from '../../domain/shared/types.js';
import { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import { noReadModels, TestClock } from '../support/fixtures.js';
import { type StoreUnderTest, storeUnderTest } from '../support/stores.js';

/** A tally with a cap: `Add` past the cap is refused; `Reset` empties it. */
type TallyCommand = Command<'Add', { n: number }> | Command<'Reset', Record<string, never>>;
type TallyEvent = Event<'Added', { n: number }> | Event<'Reset', Record<string, never>>;
const CAP = 10;
const tally: Decider<TallyCommand, TallyEvent, { total: number }> = {
  initialState: () => ({ total: 0 }),
  decide: (c, s) => {
    if (c.type === 'Reset') return s.total === 0 ? [] : [{ type: 'Reset', data: {} }];
    if (s.total + c.data.n > CAP) throw new DomainError('VALIDATION_ERROR', `the tally is at ${s.total}`);
    return [{ type: 'Added', data: { n: c.data.n } }];
  },
  evolve: (s, e) => (e.type === 'Added' ? { total: s.total + e.data.n } : { total: 0 }),
};

/**
 * Counts the stream reads the executor makes (one stream at a time, and the streams read together for a batch) and
 * its appends (the streams of each `appendToStream` and each `appendMany`).
 */
function counting(store: EventStorePort): {
  store: EventStorePort;
  reads: () => number;
  batchReads: () => string[];
  appends: () => string[][];
} {
  let reads = 0;
  const batch: string[] = [];
  const appends: string[][] = [];
  const wrapped = Object.create(store) as EventStorePort;
  wrapped.appendToStream = (stream, ...rest) => {
    appends.push([stream]);
    return store.appendToStream(stream, ...rest);
  };
  wrapped.appendMany = (many) => {
    appends.push(many.map((a) => a.stream));
    return store.appendMany(many);
  };
  wrapped.readStream = (...args) => {
    reads++;
    return store.readStream(...args);
  };
  wrapped.readStreams = (names) => {
    batch.push(...names);
    return store.readStreams(names);
  };
  return { store: wrapped, reads: () => reads, batchReads: () => [...batch], appends: () => appends.map((a) => [...a]) };
}

/**
 * The command path keeps the aggregates it wrote and decides the next command on their state without reading the
 * stream (docs/event-store.md#the-aggregate-cache); a stream another writer moved meanwhile is read again.
 */
describe('the aggregate cache of the command path', function () {
  this.timeout(60_000);
  let sut: StoreUnderTest;
  const ids = { id: (p: string) => `${p}_x`, uuid: () => crypto.randomUUID(), derived: (p: string) => p };
  const ctx = { accountId: 'acc_cache', requestId: null, correlationId: 'c', actor: 'test' };
  const add = (n: number) => ({ type: 'Add', data: { n } }) as const;
  before(async () => {
    sut = await storeUnderTest();
  });
  after(() => sut.close());

  const executor = (size: number) => {
    const c = counting(sut.store);
    return { x: new CommandExecutor(c.store, ids, new TestClock(), noReadModels, undefined, size), reads: c.reads };
  };
  const totalOf = async (stream: string) =>
    (await sut.store.readStream(stream)).reduce((t, e) => (e.type === 'Added' ? t + (e.data as { n: number }).n : 0), 0);

  it('decides the next command on the state it wrote: one read for three commands', async () => {
    const stream = `tally-${crypto.randomUUID()}`;
    const { x, reads } = executor(100);
    await x.execute(tally, stream, add(1), ctx);
    await x.execute(tally, stream, add(2), ctx);
    const r = await x.execute(tally, stream, add(3), ctx);
    expect(reads()).to.equal(1);
    expect(r.state).to.deep.equal({ total: 6 });
    expect(r.revision).to.equal(2n);
    expect(await totalOf(stream)).to.equal(6);
  });

  it('reads every time with no cache', async () => {
    const stream = `tally-${crypto.randomUUID()}`;
    const { x, reads } = executor(0);
    for (const n of [1, 2, 3]) await x.execute(tally, stream, add(n), ctx);
    expect(reads()).to.equal(3);
  });

  it('executes commands written together one after the other where another writer may be, and an undo hears what was written', async () => {
    const [a, b] = [1, 2].map(() => `tally-${crypto.randomUUID()}`) as [string, string];
    const c = counting(sut.store);
    const x = new CommandExecutor(c.store, ids, new TestClock(), noReadModels, undefined, 100);
    await x.execute(tally, b, add(9), ctx);
    const undone: { err: unknown; written: string[] }[] = [];
    const err = await x
      .executeTogether([step(tally, a, add(1), ctx), step(tally, b, add(2), ctx)], async (e, written) => {
        undone.push({ err: e, written: written.map((w) => w.stream) });
      })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DomainError);
    expect(undone).to.have.length(1);
    expect(undone[0]!.err).to.equal(err);
    expect(undone[0]!.written).to.deep.equal([a]);
    expect(c.appends()).to.deep.equal([[b], [a]]);
    expect(await totalOf(a)).to.equal(1);
  });

  it('a stream another writer moved answers a conflict, and the command is decided again on the stream as read', async () => {
    const stream = `tally-${crypto.randomUUID()}`;
    const a = executor(100);
    const b = executor(100);
    await a.x.execute(tally, stream, add(4), ctx);
    await b.x.execute(tally, stream, add(5), ctx); // a's cached state (4 at revision 0) is stale now
    const before = a.reads();
    // on a's cache this fits (4 + 3), on the stream it does not (9 + 3): the stream wins
    let refused: unknown = null;
    await a.x.execute(tally, stream, add(3), ctx).catch((e: unknown) => (refused = e));
    expect(refused).to.be.instanceOf(DomainError);
    expect(a.reads()).to.equal(before + 1);
    expect(await totalOf(stream)).to.equal(9);
    // and one that fits both is written once, at the stream's revision
    const r = await a.x.execute(tally, stream, add(1), ctx);
    expect(r.revision).to.equal(2n);
    expect(await totalOf(stream)).to.equal(10);
  });

  it('a refusal or a no-op on the cached state is checked on the stream as read', async () => {
    const stream = `tally-${crypto.randomUUID()}`;
    const a = executor(100);
    const b = executor(100);
    await a.x.execute(tally, stream, add(10), ctx);
    await b.x.execute(tally, stream, { type: 'Reset', data: {} }, ctx);
    // a's cache says the tally is full: the stream says it was reset, so the add is written
    const r = await a.x.execute(tally, stream, add(2), ctx);
    expect(r.events).to.have.length(1);
    expect(await totalOf(stream)).to.equal(2);
    // a's cache says 2: its Reset there meets b's reset on the stream (a conflict), and is a no-op on the stream as read
    await b.x.execute(tally, stream, { type: 'Reset', data: {} }, ctx);
    expect((await a.x.execute(tally, stream, { type: 'Reset', data: {} }, ctx)).events).to.deep.equal([]);
    // a's cache says 0 now: a Reset is a no-op there, but b has added since, so it is written
    await b.x.execute(tally, stream, add(3), ctx);
    expect((await a.x.execute(tally, stream, { type: 'Reset', data: {} }, ctx)).events).to.have.length(1);
    expect(await totalOf(stream)).to.equal(0);
    expect((await sut.store.readStream(stream)).map((e) => e.type)).to.deep.equal(['Added', 'Reset', 'Added', 'Reset', 'Added', 'Reset']);
  });

  describe('commands in order on one stream (executeInOrder)', () => {
    const appendsOf = () => {
      const c = counting(sut.store);
      return { x: new CommandExecutor(c.store, ids, new TestClock(), noReadModels, undefined, 100), appends: c.appends };
    };

    it('decides each on the state the ones before it leave, leaves a refused one out, and appends the rest in one append', async () => {
      const stream = `tally-${crypto.randomUUID()}`;
      const { x, appends } = appendsOf();
      // 4 fits, 8 more does not (12 > 10), 5 more does (9)
      const r = await x.executeInOrder(tally, stream, [add(4), add(8), add(5)], ctx);
      expect(r.events.map((e) => e.data)).to.deep.equal([{ n: 4 }, { n: 5 }]);
      expect(r.refusals.map((e) => e instanceof DomainError)).to.deep.equal([false, true, false]);
      expect(r.refusals[0]).to.equal(undefined);
      expect([r.state, r.revision]).to.deep.equal([{ total: 9 }, 1n]);
      expect(appends()).to.deep.equal([[stream]]);
      const written = await sut.store.readStream(stream);
      expect(written.map((e) => e.data)).to.deep.equal([{ n: 4 }, { n: 5 }]);
      // one append: on PostgreSQL one commit (EventStoreDB gives each event a position of its own)
      if (sut.store.kind === 'postgres') expect(new Set(written.map((e) => e.checkpoint.split('/')[0])).size).to.equal(1);
    });

    it('appends nothing when every one is refused, and execute throws the refusal of its one command', async () => {
      const stream = `tally-${crypto.randomUUID()}`;
      const { x, appends } = appendsOf();
      await x.execute(tally, stream, add(10), ctx);
      const r = await x.executeInOrder(tally, stream, [add(1), add(2)], ctx);
      expect([r.events, r.checkpoint]).to.deep.equal([[], null]);
      expect(r.refusals.every((e) => e instanceof DomainError)).to.equal(true);
      expect(await x.execute(tally, stream, add(1), ctx).catch((e: unknown) => e)).to.be.instanceOf(DomainError);
      expect(appends()).to.have.length(1);
    });

    it('a stream another writer moved decides them all again on the stream as read', async () => {
      const stream = `tally-${crypto.randomUUID()}`;
      const a = appendsOf();
      const b = appendsOf();
      await a.x.execute(tally, stream, add(1), ctx);
      await b.x.execute(tally, stream, add(5), ctx); // a's cached state (1 at revision 0) is stale now
      // on a's cache both fit (1 + 3 + 4), on the stream only the first (6 + 3, then 13 > 10)
      const r = await a.x.executeInOrder(tally, stream, [add(3), add(4)], ctx);
      expect(r.events.map((e) => e.data)).to.deep.equal([{ n: 3 }]);
      expect(r.refusals.map((e) => e instanceof DomainError)).to.deep.equal([false, true]);
      expect([r.state, r.revision]).to.deep.equal([{ total: 9 }, 2n]);
      expect(await totalOf(stream)).to.equal(9);
    });
  });

  it("a batch (executeMany) decides each stream's commands in order, each event with its own item's metadata, and throws the first refusal once the rest is written", async () => {
    const [one, two] = [1, 2].map(() => `tally-${crypto.randomUUID()}`) as [string, string];
    const c = counting(sut.store);
    const x = new CommandExecutor(c.store, ids, new TestClock(), noReadModels, undefined, 100);
    const as = (requestId: string) => ({ ...ctx, requestId, correlationId: requestId });
    // on `one`: 4 fits, 8 more does not (12 > 10), 5 more does (9); on `two`: 11 does not, 2 does
    const items = [
      { stream: one, input: add(4), ctx: as('r1') },
      { stream: two, input: add(11), ctx: as('r2') },
      { stream: one, input: add(8), ctx: as('r3') },
      { stream: two, input: add(2), ctx: as('r4') },
      { stream: one, input: add(5), ctx: as('r5') },
    ];
    const thrown = await x.executeMany(tally, items).then(
      () => null,
      (e: unknown) => e,
    );
    expect(thrown).to.be.instanceOf(DomainError);
    // the first refusal of the first stream met: 8 on top of 4
    expect((thrown as DomainError).message).to.equal('the tally is at 4');
    expect(c.appends()).to.deep.equal([[one, two]]);
    const written = async (stream: string) =>
      (await sut.store.readStream(stream)).map((e) => [(e.data as { n: number }).n, e.metadata.requestId]);
    expect(await written(one)).to.deep.equal([
      [4, 'r1'],
      [5, 'r5'],
    ]);
    expect(await written(two)).to.deep.equal([[2, 'r4']]);
  });

  describe('a stream the caller knows is new (newStream)', () => {
    const fresh = { newStream: true } as const;

    it('is decided on the initial state and appended with no_stream, reading nothing', async () => {
      const stream = `tally-${crypto.randomUUID()}`;
      const { x, reads } = executor(0);
      const r = await x.execute(tally, stream, add(4), ctx, fresh);
      expect(reads()).to.equal(0);
      expect(r).to.deep.include({ state: { total: 4 }, revision: 0n });
      expect(await totalOf(stream)).to.equal(4);
    });

    it('that exists after all answers a conflict: the command is read and decided again, as without the hint', async () => {
      for (const size of [0, 100]) {
        const stream = `tally-${crypto.randomUUID()}`;
        const other = executor(size);
        await other.x.execute(tally, stream, add(4), ctx);
        const { x, reads } = executor(size);
        // fits on the state taken as new; on the stream as read too: written after it, once
        const r = await x.execute(tally, stream, add(5), ctx, fresh);
        expect(r).to.deep.include({ state: { total: 9 }, revision: 1n });
        expect(reads()).to.equal(1);
        // fits on the initial state, not on the stream (9 + 3): the stream's refusal stands
        let refused: unknown = null;
        await executor(size)
          .x.execute(tally, stream, add(3), ctx, fresh)
          .catch((e: unknown) => (refused = e));
        expect(refused).to.be.instanceOf(DomainError);
        expect((await sut.store.readStream(stream)).map((e) => e.type)).to.deep.equal(['Added', 'Added']);
      }
    });

    it('takes only a decision that appends: a refusal or a no-op on the initial state is checked on the stream as read', async () => {
      const stream = `tally-${crypto.randomUUID()}`;
      await executor(0).x.execute(tally, stream, add(4), ctx);
      const { x, reads } = executor(0);
      // a no-op on the initial state (nothing to reset); the stream holds 4, so the reset is written
      expect((await x.execute(tally, stream, { type: 'Reset', data: {} }, ctx, fresh)).events).to.have.length(1);
      expect(reads()).to.equal(1);
      // refused on the initial state (past the cap); the stream was reset, so it is still refused there
      let refused: unknown = null;
      await x.execute(tally, stream, add(CAP + 1), ctx, fresh).catch((e: unknown) => (refused = e));
      expect(refused).to.be.instanceOf(DomainError);
      expect(reads()).to.equal(2);
      expect(await totalOf(stream)).to.equal(0);
    });
  });

  it('keeps at most its size, the least recently used going first', async () => {
    const { x, reads } = executor(2);
    const s = [1, 2, 3].map(() => `tally-${crypto.randomUUID()}`);
    for (const stream of s) await x.execute(tally, stream, add(1), ctx); // 3 reads; s[0] is dropped
    await x.execute(tally, s[2]!, add(1), ctx);
    await x.execute(tally, s[1]!, add(1), ctx);
    expect(reads()).to.equal(3);
    await x.execute(tally, s[0]!, add(1), ctx);
    expect(reads()).to.equal(4);
  });

  describe('exact, where the store is the only writer', () => {
    let sole: PgEventStore;
    before(() => {
      sole = new PgEventStore(sut.handle.db, new TestClock(), { soleWriter: true });
    });
    after(() => sole.close());
    const exact = (size = 100) => {
      const c = counting(sole);
      return {
        x: new CommandExecutor(c.store, ids, new TestClock(), noReadModels, undefined, size),
        reads: c.reads,
        batchReads: c.batchReads,
        appends: c.appends,
      };
    };

    it("takes a batch's states from what it keeps, and reads only the others, together", async () => {
      const [kept, other, fresh] = [1, 2, 3].map(() => `tally-${crypto.randomUUID()}`) as [string, string, string];
      const { x, batchReads } = exact();
      await x.execute(tally, kept, add(4), ctx, { newStream: true });
      await sole.appendToStream(
        other,
        [{ id: crypto.randomUUID(), type: 'Added', data: { n: 2 }, metadata: { ...ctx, causationId: null } }],
        {
          expectedRevision: 'no_stream',
        },
      );
      const states = await x.statesOf(tally, [kept, other, fresh, kept]);
      expect(Object.fromEntries(states)).to.deep.equal({
        [kept]: { state: { total: 4 }, revision: 0n },
        [other]: { state: { total: 2 }, revision: 0n },
        [fresh]: { state: { total: 0 }, revision: 'no_stream' },
      });
      expect(batchReads()).to.deep.equal([other, fresh]);
      // what it read is kept: a batch of commands on all three reads nothing more, and decides on the same states
      await x.executeMany(
        tally,
        [kept, other, fresh].map((stream) => ({ stream, input: add(5), ctx })),
      );
      expect(batchReads()).to.deep.equal([other, fresh]);
      const stored = async (stream: string) => (await sole.readStream(stream)).reduce((t, e) => t + (e.data as { n: number }).n, 0);
      expect(await Promise.all([kept, other, fresh].map(stored))).to.deep.equal([9, 7, 5]);
      expect(Object.fromEntries(await x.statesOf(tally, [kept, other, fresh]))).to.deep.equal({
        [kept]: { state: { total: 9 }, revision: 1n },
        [other]: { state: { total: 7 }, revision: 1n },
        [fresh]: { state: { total: 5 }, revision: 0n },
      });
      expect(batchReads()).to.have.length(2);
    });

    it('answers states, refusals and no-ops from what it keeps, without reading', async () => {
      const stream = `tally-${crypto.randomUUID()}`;
      const { x, reads } = exact();
      await x.execute(tally, stream, add(9), ctx);
      expect(reads()).to.equal(1);
      expect(await x.state(tally, stream)).to.deep.equal({ state: { total: 9 }, revision: 0n });
      let refused: unknown = null;
      await x.execute(tally, stream, add(2), ctx).catch((e: unknown) => (refused = e));
      expect(refused).to.be.instanceOf(DomainError);
      await x.execute(tally, stream, { type: 'Reset', data: {} }, ctx);
      expect((await x.execute(tally, stream, { type: 'Reset', data: {} }, ctx)).events).to.deep.equal([]);
      expect(reads()).to.equal(1);
    });

    it('takes a stream as new only where it keeps no state of it, and reads one that exists after all', async () => {
      const stream = `tally-${crypto.randomUUID()}`;
      const { x, reads } = exact();
      await x.execute(tally, stream, add(3), ctx, { newStream: true });
      // kept: decided on what it keeps (3 + 8 is past the cap), not on the initial state
      let refused: unknown = null;
      await x.execute(tally, stream, add(8), ctx, { newStream: true }).catch((e: unknown) => (refused = e));
      expect(refused).to.be.instanceOf(DomainError);
      expect(reads()).to.equal(0);
      // another executor keeps nothing of it: its append as new meets the stream, which it reads
      const other = exact();
      expect((await other.x.execute(tally, stream, add(2), ctx, { newStream: true })).revision).to.equal(1n);
      expect(other.reads()).to.equal(1);
      expect((await sole.readStream(stream)).map((e) => e.data)).to.deep.equal([{ n: 3 }, { n: 2 }]);
    });

    it('drops a state whose stream the store appended to by another way', async () => {
      const stream = `tally-${crypto.randomUUID()}`;
      const { x, reads } = exact();
      await x.execute(tally, stream, add(1), ctx);
      await sole.appendToStream(
        stream,
        [{ id: crypto.randomUUID(), type: 'Added', data: { n: 5 }, metadata: { ...ctx, causationId: null } }],
        {
          expectedRevision: 0n,
        },
      );
      expect(await x.state(tally, stream)).to.deep.equal({ state: { total: 6 }, revision: 1n });
      expect(reads()).to.equal(2);
    });

    describe('commands written together (executeTogether)', () => {
      const two = () => [1, 2].map(() => `tally-${crypto.randomUUID()}`) as [string, string];
      const transactionOf = async (stream: string) => (await sole.readStream(stream)).map((e) => e.checkpoint.split('/')[0]);

      it('decides each in order and appends them in one appendMany, in one transaction', async () => {
        const [a, b] = two();
        const { x, appends } = exact();
        await x.execute(tally, a, add(1), ctx);
        const [ra, rb] = await x.executeTogether([step(tally, a, add(2), ctx), step(tally, b, add(3), ctx)]);
        expect(appends()).to.deep.equal([[a], [a, b]]);
        expect([ra!.revision, rb!.revision]).to.deep.equal([1n, 0n]);
        expect([ra!.state, rb!.state]).to.deep.equal([{ total: 3 }, { total: 3 }]);
        expect([await totalOfSole(a), await totalOfSole(b)]).to.deep.equal([3, 3]);
        const [ta, tb] = [await transactionOf(a), await transactionOf(b)];
        expect(ta[1]).to.equal(tb[0]);
        expect(ta[0]).to.not.equal(ta[1]);
      });

      it('writes nothing when any of them is refused, and hears no undo', async () => {
        const [a, b] = two();
        const { x, appends } = exact();
        await x.execute(tally, b, add(9), ctx);
        const undone: unknown[] = [];
        const err = await x
          .executeTogether([step(tally, a, add(1), ctx), step(tally, b, add(2), ctx)], async (e) => {
            undone.push(e);
          })
          .catch((e: unknown) => e);
        expect(err).to.be.instanceOf(DomainError);
        expect(undone).to.deep.equal([]);
        expect(appends()).to.deep.equal([[b]]);
        expect(await sole.readStream(a)).to.deep.equal([]);
      });

      it('takes a conflict met anyway stream by stream, the usual way, and an undo hears what was written', async () => {
        const [a, b] = two();
        const { x } = exact();
        await x.execute(tally, a, add(1), ctx);
        await x.execute(tally, b, add(1), ctx);
        // another writer (the same database, another store of it) moves both streams behind the cache's back
        const behind = new PgEventStore(sut.handle.db, new TestClock());
        for (const s of [a, b])
          await behind.appendToStream(
            s,
            [{ id: crypto.randomUUID(), type: 'Added', data: { n: 8 }, metadata: { ...ctx, causationId: null } }],
            {
              expectedRevision: 0n,
            },
          );
        await behind.close();
        const undone: { err: unknown; written: string[] }[] = [];
        const err = await x
          .executeTogether([step(tally, a, { type: 'Reset', data: {} }, ctx), step(tally, b, add(2), ctx)], async (e, written) => {
            undone.push({ err: e, written: written.map((w) => w.stream) });
          })
          .catch((e: unknown) => e);
        // a's reset conflicted and went again on the stream as read; b's add, decided again there, is past the cap
        expect(err).to.be.instanceOf(DomainError);
        expect(undone).to.have.length(1);
        expect(undone[0]!.written).to.deep.equal([a]);
        expect([await totalOfSole(a), await totalOfSole(b)]).to.deep.equal([0, 9]);
      });
    });

    const totalOfSole = async (stream: string) =>
      (await sole.readStream(stream)).reduce((t, e) => (e.type === 'Added' ? t + (e.data as { n: number }).n : 0), 0);

    it('does not keep a state read while an append it does not reflect went to its stream', async () => {
      const stream = `tally-${crypto.randomUUID()}`;
      const { x, reads } = exact();
      await sole.appendToStream(
        stream,
        [{ id: crypto.randomUUID(), type: 'Added', data: { n: 1 }, metadata: { ...ctx, causationId: null } }],
        {
          expectedRevision: 'no_stream',
        },
      );
      // the read and an append overlap: whichever way they fall, the state kept is the stream's
      await Promise.all([
        x.state(tally, stream),
        sole.appendToStream(stream, [{ id: crypto.randomUUID(), type: 'Added', data: { n: 2 }, metadata: { ...ctx, causationId: null } }], {
          expectedRevision: 0n,
        }),
      ]);
      expect((await x.state(tally, stream)).state).to.deep.equal({ total: 3 });
      expect((await x.execute(tally, stream, add(1), ctx)).revision).to.equal(2n);
      expect(reads()).to.be.at.most(3);
    });
  });
});

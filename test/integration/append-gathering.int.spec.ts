import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sql } from 'kysely';
import { parseCheckpoint, WrongExpectedRevisionError } from '../../application/ports/event-store.port.js';
import { type DatabaseHandle, openDatabase } from '../../infrastructure/db/database.js';
import { migrateToLatest } from '../../infrastructure/db/migrate.js';
import { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import { ev, TestClock } from '../support/fixtures.js';

/**
 * Appends made in one turn of the event loop go in one statement when the store gathers them (the embedded
 * default, docs/event-store.md#appending): one transaction, so their checkpoints share its transaction id.
 */
describe('PostgreSQL event store: appends gathered per event-loop turn', () => {
  let handle: DatabaseHandle;
  before(async () => {
    handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, poolSize: 4 });
    await migrateToLatest(handle.db as never);
    if (handle.kind === 'postgres') await sql`truncate events, streams restart identity`.execute(handle.db);
  });
  after(() => handle.close());

  /** the transactions that three appends made in the same turn were written in */
  async function transactionsOf(gatherAppends: boolean): Promise<number> {
    const store = new PgEventStore(handle.db, new TestClock(), { appendConcurrency: 1, gatherAppends });
    const results = await Promise.all(
      [1, 2, 3].map(() => store.appendToStream(`gather-${randomUUID()}`, [ev('Gathered')], { expectedRevision: 'no_stream' })),
    );
    return new Set(results.map((r) => parseCheckpoint(r.checkpoint)[0])).size;
  }

  it('reads the whole streams asked for in one turn in one statement, each its own events (docs/event-store.md#reading-streams)', async () => {
    const writer = new PgEventStore(handle.db, new TestClock());
    const [a, b, none] = ['a', 'b', 'none'].map((k) => `read-${k}-${randomUUID()}`) as [string, string, string];
    await writer.appendToStream(a, [ev('A1'), ev('A2')], { expectedRevision: 'no_stream' });
    await writer.appendToStream(b, [ev('B1')], { expectedRevision: 'no_stream' });
    const asked: string[][] = [];
    const reads = (gatherReads: boolean) => {
      const store = new PgEventStore(handle.db, new TestClock(), { gatherReads });
      const readStreams = store.readStreams.bind(store);
      store.readStreams = (names) => {
        asked.push([...names]);
        return readStreams(names);
      };
      return store;
    };
    const store = reads(true);
    const [ofA, ofB, ofNone, ofAAgain, fromRevision] = await Promise.all([
      store.readStream(a),
      store.readStream(b),
      store.readStream(none),
      store.readStream(a),
      store.readStream(a, { fromRevision: 1n }),
    ]);
    expect(asked).to.deep.equal([[a, b, none]]);
    expect(ofA.map((e) => e.type)).to.deep.equal(['A1', 'A2']);
    expect(ofB.map((e) => e.type)).to.deep.equal(['B1']);
    expect(ofNone).to.deep.equal([]);
    expect(ofAAgain).to.deep.equal(ofA);
    expect(ofAAgain).not.to.equal(ofA);
    // a read from a revision goes alone, at once
    expect(fromRevision.map((e) => e.type)).to.deep.equal(['A2']);
    // without gathering every read is its own statement
    asked.length = 0;
    const alone = reads(false);
    await Promise.all([alone.readStream(a), alone.readStream(b)]);
    expect(asked).to.deep.equal([]);
  });

  it('writes the appends of one turn in one transaction', async () => {
    expect(await transactionsOf(true)).to.equal(1);
  });

  it('without gathering, the first goes alone and the others wait for it', async () => {
    expect(await transactionsOf(false)).to.equal(2);
  });

  it('answers every expectation in a gathered statement as an append alone would (append_events_many)', async () => {
    const store = new PgEventStore(handle.db, new TestClock(), { appendConcurrency: 1, gatherAppends: true });
    const s = (k: string) => `gathered-${k}-${randomUUID()}`;
    const [old, exact, stale, taken, anyNew, exists] = ['old', 'exact', 'stale', 'taken', 'any', 'exists'].map(s) as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    await Promise.all(
      [old, exact, stale, taken, exists].map((name) =>
        store.appendToStream(name, [ev('Seeded'), ev('Seeded')], { expectedRevision: 'no_stream' }),
      ),
    );
    const replayed = [ev('Replayed')];
    const first = await store.appendToStream(old, replayed, { expectedRevision: 1n });
    const fresh = s('new');
    const out = await Promise.all([
      store.appendToStream(fresh, [ev('A'), ev('B'), ev('C')], { expectedRevision: 'no_stream' }),
      store.appendToStream(exact, [ev('A')], { expectedRevision: 1n }),
      store.appendToStream(stale, [ev('A')], { expectedRevision: 0n }).catch((e: unknown) => e),
      store.appendToStream(taken, [ev('A')], { expectedRevision: 'no_stream' }).catch((e: unknown) => e),
      store.appendToStream(anyNew, [ev('A'), ev('B')], { expectedRevision: 'any' }),
      store.appendToStream(exists, [ev('A')], { expectedRevision: 'stream_exists' }),
      // a client's retry of an append already stored answers as the first time, writing nothing
      store.appendToStream(old, replayed, { expectedRevision: 1n }),
    ]);
    const [made, moved, conflict, refused, anyMade, existed, replay] = out as [
      { nextRevision: bigint; checkpoint: string },
      { nextRevision: bigint; checkpoint: string },
      unknown,
      unknown,
      { nextRevision: bigint; checkpoint: string },
      { nextRevision: bigint; checkpoint: string },
      { nextRevision: bigint; checkpoint: string },
    ];
    expect(new Set([made, moved, anyMade, existed].map((r) => parseCheckpoint(r.checkpoint)[0])).size, 'one statement').to.equal(1);
    expect(made.nextRevision).to.equal(2n);
    expect(moved.nextRevision).to.equal(2n);
    expect(conflict).to.be.instanceOf(WrongExpectedRevisionError);
    expect((conflict as WrongExpectedRevisionError).actual).to.equal(1n);
    expect(refused).to.be.instanceOf(WrongExpectedRevisionError);
    expect(anyMade.nextRevision).to.equal(1n);
    expect(existed.nextRevision).to.equal(2n);
    expect(replay).to.deep.equal(first);
    expect((await store.readStream(fresh)).map((e) => [e.type, e.streamRevision])).to.deep.equal([
      ['A', 0n],
      ['B', 1n],
      ['C', 2n],
    ]);
    expect((await store.readStream(old)).map((e) => e.type)).to.deep.equal(['Seeded', 'Seeded', 'Replayed']);
    expect((await store.readStream(stale)).map((e) => e.type)).to.deep.equal(['Seeded', 'Seeded']);
    await store.close();
  });
});

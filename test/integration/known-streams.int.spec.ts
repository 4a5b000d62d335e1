import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { NewEvent } from '../../application/ports/event-store.port.js';
import type { DatabaseHandle } from '../../infrastructure/db/database.js';
import { KnownStreams } from '../../infrastructure/event-store/known-streams.js';
import { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import { costMetrics } from '../../infrastructure/observability/metrics.js';
import { TestClock } from '../support/fixtures.js';
import { freshDatabase } from '../support/stores.js';

// The sole writer's filter of the streams that exist (docs/event-store.md#streams-known-to-be-new): a stream that
// does not exist is not read; one that does always is.

const event = (): NewEvent => ({
  id: randomUUID(),
  type: 'Happened',
  data: {},
  metadata: { accountId: 'acc', correlationId: 'c', causationId: null, requestId: null, actor: 't' },
});

describe('streams known to exist', function () {
  this.timeout(30_000);

  it('never says a name added or filled in does not exist, and says so of most others', async () => {
    const known = new KnownStreams();
    const stored = Array.from({ length: 12_000 }, (_, i) => `conversation-${i}-${randomUUID()}`);
    const added = Array.from({ length: 500 }, () => `consent-${randomUUID()}`);
    for (const n of added) known.add(n);
    expect(known.mayExist('anything'), 'nothing is known before the filter is filled').to.equal(true);
    await known.fill(async (after, limit) => {
      const sorted = [...stored].sort();
      const from = after === null ? 0 : sorted.findIndex((n) => n > after);
      return from < 0 ? [] : sorted.slice(from, from + limit);
    });
    expect([...stored, ...added].every((n) => known.mayExist(n))).to.equal(true);
    const others = Array.from({ length: 10_000 }, () => `conversation-${randomUUID()}`);
    expect(others.filter((n) => known.mayExist(n)).length).to.be.lessThan(50);
  });

  describe('in the PostgreSQL store, as the only writer', () => {
    let h: DatabaseHandle;
    before(async function () {
      if (process.env.EVENTSTORE_URL) this.skip(); // the PostgreSQL store's own
      h = await freshDatabase();
    });
    after(() => h?.close());
    const statements = async () => (await costMetrics.statements.get()).values.reduce((n, v) => n + v.value, 0);

    it('reads no stream it knows does not exist, and every stream that does, those written before it started too', async () => {
      const before = `thing-${randomUUID()}`;
      const other = new PgEventStore(h.db, new TestClock());
      await other.appendToStream(before, [event()], { expectedRevision: 'no_stream' });
      await other.close();

      const store = new PgEventStore(h.db, new TestClock(), { soleWriter: true, knowsStreams: true });
      try {
        // until the filter is filled every stream is read
        expect(await store.readStream(`thing-${randomUUID()}`)).to.deep.equal([]);
        const deadline = Date.now() + 10_000;
        let missing = `thing-${randomUUID()}`;
        for (;;) {
          const s0 = await statements();
          await store.readStream(missing);
          if ((await statements()) === s0) break;
          if (Date.now() > deadline) throw new Error('the filter was never filled');
          missing = `thing-${randomUUID()}`;
          await new Promise((r) => setTimeout(r, 10));
        }
        const s0 = await statements();
        expect(await store.readStream(`thing-${randomUUID()}`)).to.deep.equal([]);
        expect((await store.readStreams([`thing-${randomUUID()}`, `thing-${randomUUID()}`])).size).to.equal(2);
        expect(await statements(), 'no statement for streams that do not exist').to.equal(s0);

        expect(await store.readStream(before)).to.have.length(1);
        const fresh = `thing-${randomUUID()}`;
        await store.appendToStream(fresh, [event(), event()], { expectedRevision: 'no_stream' });
        expect(await store.readStream(fresh)).to.have.length(2);
        const both = await store.readStreams([before, fresh]);
        expect([both.get(before)?.length, both.get(fresh)?.length]).to.deep.equal([1, 2]);
      } finally {
        await store.close();
      }
    });
  });
});

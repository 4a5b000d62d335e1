import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { NewEvent, RecordedEvent } from '../../application/ports/event-store.port.js';
import type { DatabaseHandle } from '../../infrastructure/db/database.js';
import { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import { fromStoredText } from '../../infrastructure/event-store/stored-json.js';
import { costMetrics } from '../../infrastructure/observability/metrics.js';
import { TestClock } from '../support/fixtures.js';
import { freshDatabase } from '../support/stores.js';

// Embedded, the store hands what it appends to its log tail, so that no reader reads it back
// (docs/event-store.md#the-log-tail). What the tail was handed must be what a read of the table gives: the same
// events, positions, revisions and times, and the same JSON, key order included.

const event = (data: Record<string, unknown>): NewEvent => ({
  id: randomUUID(),
  type: 'Happened',
  data,
  metadata: { accountId: 'acc', correlationId: 'c', causationId: null, requestId: null, actor: 't' },
});

// keys that jsonb orders otherwise than they were written: by length, then bytes; numbers first in JS objects
const awkward = () => ({
  zeta: 1,
  a: { bb: [{ y: 1, x: undefined, when: new Date(0), é: 'e', z: null }], a: 2 },
  '10': 'ten',
  '9': 'nine',
  gone: undefined,
  ü: 1,
  ab: 'x',
});

/** `value` as a `jsonb` column gives it back, the way the store makes it from the text it sends */
const asStoredJson = <T>(value: T): T => fromStoredText(JSON.stringify(value)) as T;

/** the events as text, bigints included, so that key order counts */
const text = (es: readonly RecordedEvent[]) => JSON.stringify(es, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));

describe('the log tail handed the appends of the only writer, in one session', function () {
  this.timeout(30_000);
  let h: DatabaseHandle;
  before(async function () {
    if (process.env.EVENTSTORE_URL || process.env.DATABASE_URL) this.skip(); // PGlite's: one session
    h = await freshDatabase();
  });
  after(() => h?.close());
  const statements = async () => (await costMetrics.statements.get()).values.reduce((n, v) => n + v.value, 0);

  it('answers them from memory, exactly as the table gives them, and reads the table again after a gap', async () => {
    const clock = new TestClock();
    const store = new PgEventStore(h.db, clock, {
      soleWriter: true,
      oneSession: true,
      gatherAppends: true,
      // no refresh for the reader that is a second old
      pollIntervalMs: 600_000,
    });
    const table = new PgEventStore(h.db, clock);
    try {
      await store.readAll(); // opens the tail
      const one = `thing-${randomUUID()}`;
      await store.appendToStream(one, [event(awkward()), event({ n: 2 })], { expectedRevision: 'no_stream' });
      clock.advance(1500);
      // three streams in one turn: one statement (`append_events_many`), one transaction
      await store.appendMany(
        [`other-${randomUUID()}`, `another-${randomUUID()}`, `thing-${randomUUID()}`].map((s) => ({
          stream: s,
          events: [event({ s }), event(awkward())],
          expectedRevision: 'no_stream' as const,
        })),
      );
      await store.appendToStream(one, [event({ n: 3 })], { expectedRevision: 1n });

      const s0 = await statements();
      const held = await store.readAll({ maxCount: 100 });
      expect(await statements(), 'read from memory').to.equal(s0);
      expect(held).to.have.length(9);
      const stored = await table.readAll({ maxCount: 100 });
      expect(text(held)).to.equal(text(stored));
      expect(held.map((e) => e.streamRevision)).to.deep.equal([0n, 1n, 0n, 1n, 0n, 1n, 0n, 1n, 2n]);

      // an append that fails on an event id stored already takes a position and rolls back: a gap the tail refuses
      const dup = event({ dup: true });
      await store.appendToStream(`thing-${randomUUID()}`, [dup], { expectedRevision: 'no_stream' });
      await store.appendToStream(`thing-${randomUUID()}`, [dup], { expectedRevision: 'no_stream' }).catch(() => undefined);
      await store.appendToStream(`thing-${randomUUID()}`, [event({ after: 'gap' })], { expectedRevision: 'no_stream' });
      const s1 = await statements();
      const all = await store.readAll({ maxCount: 100 });
      expect(await statements(), 'read from the table after the gap').to.be.greaterThan(s1);
      expect(text(all)).to.equal(text(await table.readAll({ maxCount: 100 })));
      expect(all).to.have.length(11);
    } finally {
      await store.close();
      await table.close();
    }
  });

  it('stores JSON in the form a jsonb column gives back', () => {
    expect(Object.keys(asStoredJson(awkward()))).to.deep.equal(['9', '10', 'a', 'ab', 'ü', 'zeta']);
    expect(JSON.stringify(asStoredJson({ b: [{ dd: 1, c: undefined }, undefined], a: new Date(0) }))).to.equal(
      '{"a":"1970-01-01T00:00:00.000Z","b":[{"dd":1},null]}',
    );
    // a key `__proto__` stays a key, in its place, and no prototype changes
    const odd = asStoredJson(JSON.parse('{"__proto__":{"x":1},"b":{"zz":1,"y":2}}') as object);
    expect(JSON.stringify(odd)).to.equal('{"b":{"y":2,"zz":1},"__proto__":{"x":1}}');
    expect(Object.getPrototypeOf(odd)).to.equal(Object.prototype);
  });
});

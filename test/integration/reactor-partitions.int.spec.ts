import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type Kysely, sql } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import { InProcessSignals } from '../../infrastructure/event-store/append-signals.js';
import { ProcessMembership } from '../../infrastructure/reactors/membership.js';
import { type Reactor, ReactorRunner } from '../../infrastructure/reactors/reactor-runner.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { ev } from '../support/fixtures.js';
import { eventually } from '../support/numbers.js';
import { type StoreUnderTest, storeUnderTest } from '../support/stores.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const TTL = 1000;

/** Reactors split by stream into partitions that worker processes share (docs/event-store.md#partitioned-reactors). */
describe('partitioned reactors', function () {
  this.timeout(60_000);
  let s: StoreUnderTest;
  before(async () => {
    s = await storeUnderTest();
  });
  after(() => s.close());
  const db = () => s.handle.db as unknown as Kysely<ReadDb>;
  const type = () => `Parted${randomUUID().replace(/-/g, '').slice(0, 8)}`;

  /** A "worker process": its own membership and runner; records which events it handled. */
  const proc = (
    name: string,
    eventType: string,
    seen: Map<string, string[]>,
    label: string,
    o: { ttl?: number; freed?: ConstructorParameters<typeof ReactorRunner>[4]['freed']; checkpointEveryMs?: number } = {},
  ) => {
    const ttl = o.ttl ?? TTL;
    const membership = new ProcessMembership(db(), ttl);
    const reactor: Reactor = {
      name,
      handles: [eventType],
      async handleBatch(batch: readonly RecordedEvent[]) {
        for (const e of batch) seen.set(e.id, [...(seen.get(e.id) ?? []), label]);
      },
    };
    const runner = new ReactorRunner(s.store, db(), reactor, silent, {
      leaseTtlMs: ttl,
      partitions: 4,
      membership,
      ...(o.freed ? { freed: o.freed } : {}),
      ...(o.checkpointEveryMs ? { checkpointEveryMs: o.checkpointEveryMs } : {}),
    });
    return {
      start: async () => {
        await membership.start();
        await runner.start();
      },
      stop: async () => {
        await runner.stop();
        await membership.stop();
      },
    };
  };
  /** `n` events, each on a stream of its own, so they fall into every partition */
  const append = async (eventType: string, n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const e = ev(eventType);
      ids.push(e.id);
      await s.store.appendToStream(`parted-${randomUUID()}`, [e], { expectedRevision: 'no_stream' });
    }
    return ids;
  };
  const holders = async (name: string) =>
    (
      await sql<{
        name: string;
        holder: string;
      }>`select name, holder from worker_leases where name like ${`${name}#%/4`} and expires_at > now()`.execute(db())
    ).rows;
  /** once b has started: a (whose runners' lease holders are `ofA`) gives two of its four partitions to b */
  const splitTwoAndTwo = (name: string, ofA: ReadonlySet<string>, timeoutMs?: number) =>
    eventually(
      async () => {
        const h = await holders(name);
        return h.length === 4 && h.filter((x) => ofA.has(x.holder)).length === 2;
      },
      'a gave two partitions to b',
      timeoutMs,
    );

  it('two processes share the partitions evenly, and every event is handled once, by one of them', async () => {
    const t = type();
    const name = `share_${t}`;
    const seen = new Map<string, string[]>();
    const a = proc(name, t, seen, 'a');
    const b = proc(name, t, seen, 'b');
    try {
      await a.start();
      await eventually(async () => (await holders(name)).length === 4, 'a holds all four partitions alone');
      const ofA = new Set((await holders(name)).map((h) => h.holder)); // a's runners' lease holders
      await b.start();
      await splitTwoAndTwo(name, ofA);
      const ids = await append(t, 60);
      await eventually(async () => ids.every((id) => seen.has(id)), 'every event handled');
      expect(ids.every((id) => seen.get(id)!.length === 1)).to.equal(true);
      const by = (label: string) => ids.filter((id) => seen.get(id)![0] === label).length;
      expect(by('a')).to.be.greaterThan(0);
      expect(by('b')).to.be.greaterThan(0);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('stores what a partition handled when it gives the partition back, though its checkpoint waits to be stored', async () => {
    const t = type();
    const name = `deferred_${t}`;
    const seen = new Map<string, string[]>();
    const a = proc(name, t, seen, 'a', { checkpointEveryMs: 60_000 });
    const b = proc(name, t, seen, 'b', { checkpointEveryMs: 60_000 });
    try {
      await a.start();
      await eventually(async () => (await holders(name)).length === 4, 'a holds all four partitions alone');
      const first = await append(t, 40);
      await eventually(async () => first.every((id) => seen.has(id)), 'a handled the first events');
      const ofA = new Set((await holders(name)).map((h) => h.holder));
      await b.start();
      await splitTwoAndTwo(name, ofA);
      const second = await append(t, 40);
      await eventually(async () => second.every((id) => seen.has(id)), 'every event handled');
      expect(
        first.filter((id) => seen.get(id)!.length > 1),
        'b starts where a left the partitions it gave back',
      ).to.deep.equal([]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('hands a partition given back to the other process at once, told by word of the freed lease', async () => {
    const t = type();
    const name = `freed_${t}`;
    const seen = new Map<string, string[]>();
    const signals = new InProcessSignals();
    const a = proc(name, t, seen, 'a', { freed: signals });
    // b tries a lease held elsewhere again only every 40 s by itself: only word of the freed lease can hand it one sooner
    const b = proc(name, t, seen, 'b', { ttl: 120_000, freed: signals });
    try {
      await a.start();
      await eventually(async () => (await holders(name)).length === 4, 'a holds all four partitions alone');
      const ofA = new Set((await holders(name)).map((h) => h.holder));
      await b.start();
      await splitTwoAndTwo(name, ofA, 15_000);
      const ids = await append(t, 40);
      await eventually(async () => ids.every((id) => seen.has(id)), 'every event handled');
      expect(ids.every((id) => seen.get(id)!.length === 1)).to.equal(true);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await signals.close();
    }
  });

  it("takes over a dead process's partitions when their leases expire, from their checkpoints", async () => {
    const t = type();
    const name = `crash_${t}`;
    // a process that died holding partitions 1 and 3: its leases and membership are still in the table
    for (const row of [`${name}#1/4`, `${name}#3/4`, 'member:dead'])
      await sql`insert into worker_leases (name, holder, expires_at) values (${row}, 'dead', now() + interval '2 seconds')`.execute(db());
    const seen = new Map<string, string[]>();
    const a = proc(name, t, seen, 'a');
    try {
      await a.start();
      const ids = await append(t, 40);
      await eventually(async () => ids.every((id) => seen.has(id)), 'every event handled once the dead leases expired');
      expect(ids.every((id) => seen.get(id)!.length === 1)).to.equal(true);
      expect((await holders(name)).map((h) => h.holder).every((h) => h !== 'dead')).to.equal(true);
    } finally {
      await a.stop();
    }
  });

  it('starts new partitions where the unpartitioned reactor was: nothing it handled comes again', async () => {
    const t = type();
    const name = `seed_${t}`;
    const seenBefore = new Map<string, string[]>();
    const plain = new ReactorRunner(
      s.store,
      db(),
      {
        name,
        handles: [t],
        async handleBatch(batch) {
          for (const e of batch) seenBefore.set(e.id, ['plain']);
        },
      },
      silent,
      { leaseTtlMs: TTL },
    );
    await plain.start();
    const early = await append(t, 10);
    await eventually(async () => early.every((id) => seenBefore.has(id)), 'the unpartitioned reactor handled the first events');
    await plain.stop();

    const seen = new Map<string, string[]>();
    const a = proc(name, t, seen, 'a');
    try {
      await a.start();
      const late = await append(t, 10);
      await eventually(async () => late.every((id) => seen.has(id)), 'the partitions handled the later events');
      expect(early.some((id) => seen.has(id))).to.equal(false);
    } finally {
      await a.stop();
    }
  });
  it('starts a reactor that replaces others where the furthest behind of them was: what they still had comes once more, nothing is skipped', async () => {
    const t = type();
    const runner = (name: string, seen: Set<string>, replaces?: readonly string[]) =>
      new ReactorRunner(
        s.store,
        db(),
        {
          name,
          handles: [t],
          ...(replaces ? { replaces } : {}),
          async handleBatch(batch) {
            for (const e of batch) seen.add(e.id);
          },
        },
        silent,
        { leaseTtlMs: TTL },
      );
    // two old reactors of the same events: one got further than the other before both were retired
    const ahead = new Set<string>();
    const behind = new Set<string>();
    const [a, b] = [runner(`ahead_${t}`, ahead), runner(`behind_${t}`, behind)];
    await a.start();
    await b.start();
    const first = await append(t, 5);
    await eventually(async () => first.every((id) => ahead.has(id) && behind.has(id)), 'both handled the first events');
    await b.stop();
    const second = await append(t, 5);
    await eventually(async () => second.every((id) => ahead.has(id)), 'the one ahead handled the next ones');
    await a.stop();
    const third = await append(t, 5);

    const seen = new Set<string>();
    const successor = runner(`successor_${t}`, seen, [`ahead_${t}`, `behind_${t}`]);
    try {
      await successor.start();
      await eventually(async () => [...second, ...third].every((id) => seen.has(id)), 'the successor handled what the one behind had not');
      expect(first.some((id) => seen.has(id))).to.equal(false);
    } finally {
      await successor.stop();
    }
  });

  it('hands every event of one partition key to one partition, in log order, whatever stream it is on', async () => {
    const t = type();
    const batches: { key: string; ids: string[] }[] = [];
    const membership = new ProcessMembership(db(), TTL);
    const reactor: Reactor = {
      name: `keyed_${t}`,
      handles: [t],
      partitionKey: (e) => (e.data as { key: string }).key,
      async handleBatch(batch: readonly RecordedEvent[]) {
        for (const e of batch) batches.push({ key: (e.data as { key: string }).key, ids: [e.id] });
      },
    };
    const runner = new ReactorRunner(s.store, db(), reactor, silent, { leaseTtlMs: TTL, partitions: 4, membership });
    const written = new Map<string, string[]>([
      ['k1', []],
      ['k2', []],
      ['k3', []],
    ]);
    // each event on a stream of its own: by stream they would scatter over the partitions, whose batches are
    // handled side by side once the runner starts
    for (let i = 0; i < 30; i++) {
      const key = `k${(i % 3) + 1}`;
      const e = ev(t, { key });
      written.get(key)!.push(e.id);
      await s.store.appendToStream(`keyed-${randomUUID()}`, [e], { expectedRevision: 'no_stream' });
    }
    await membership.start();
    await runner.start();
    try {
      await eventually(async () => batches.length === 30, 'all 30 handled');
      for (const [key, ids] of written)
        expect(
          batches.filter((b) => b.key === key).flatMap((b) => b.ids),
          `${key}: in log order`,
        ).to.deep.equal(ids);
    } finally {
      await runner.stop();
      await membership.stop();
    }
  });
});

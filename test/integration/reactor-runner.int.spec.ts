import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import { type Reactor, ReactorRunner } from '../../infrastructure/reactors/reactor-runner.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { ev } from '../support/fixtures.js';
import { eventually } from '../support/numbers.js';
import { type StoreUnderTest, storeUnderTest } from '../support/stores.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** The runner under the number process manager: its checkpoint, its lease, redelivery after a failed batch. */
describe('reactor runner', function () {
  this.timeout(30_000);
  let s: StoreUnderTest;
  before(async () => {
    s = await storeUnderTest();
  });
  after(() => s.close());

  const type = () => `Reacted${randomUUID().replace(/-/g, '').slice(0, 8)}`;
  const counting = (name: string, eventType: string, seen: Map<string, string[]>, fail?: { times: number }): Reactor => ({
    name,
    handles: [eventType],
    async handleBatch(batch: readonly RecordedEvent[]) {
      if (fail && fail.times > 0) {
        fail.times--;
        throw new Error('effect failed');
      }
      for (const e of batch) seen.set(e.id, [...(seen.get(e.id) ?? []), name]);
    },
  });
  const append = async (eventType: string, n: number) => {
    const events = Array.from({ length: n }, () => ev(eventType));
    await s.store.appendToStream(`reacted-${randomUUID()}`, events, { expectedRevision: 'no_stream' });
    return events.map((e) => e.id);
  };
  const db = () => s.handle.db as unknown as Kysely<ReadDb>;

  it('lets one of two processes drive a reactor; the other takes over when it stops, from the stored checkpoint', async () => {
    const t = type();
    const name = `lease_${t}`;
    const seenA = new Map<string, string[]>();
    const seenB = new Map<string, string[]>();
    const a = new ReactorRunner(s.store, db(), counting(name, t, seenA), silent, { leaseTtlMs: 1000 });
    const b = new ReactorRunner(s.store, db(), counting(name, t, seenB), silent, { leaseTtlMs: 1000 });
    await a.start();
    await eventually(
      async () =>
        (
          await s.handle.db
            .selectFrom('worker_leases' as never)
            .selectAll()
            .where('name' as never, '=', name as never)
            .execute()
        ).length > 0,
      'a holds the lease',
    );
    await b.start();
    const first = await append(t, 20);
    await eventually(async () => first.every((id) => seenA.has(id)), 'a handled the first events');
    expect(seenB.size).to.equal(0);
    await a.stop();
    const second = await append(t, 20);
    await eventually(async () => second.every((id) => seenB.has(id)), 'b handled the next events');
    expect(
      first.some((id) => seenB.has(id)),
      'b starts after the checkpoint a left',
    ).to.equal(false);
    expect([...seenA.values(), ...seenB.values()].every((v) => v.length === 1)).to.equal(true);
    await b.stop();
  });

  it('redelivers a batch whose effects failed, and moves the checkpoint only after they succeed', async () => {
    const t = type();
    const seen = new Map<string, string[]>();
    const fail = { times: 2 };
    const r = new ReactorRunner(s.store, db(), counting(`retry_${t}`, t, seen, fail), silent, { leaseTtlMs: 1000, retryDelayMs: 20 });
    const ids = await append(t, 5);
    await r.start();
    await eventually(async () => ids.every((id) => seen.has(id)), 'handled after two failures');
    expect(fail.times).to.equal(0);
    const last = (await s.store.readAll({ filter: { eventTypes: [t] } })).at(-1)!;
    await eventually(
      async () =>
        (
          (await s.handle.db
            .selectFrom('reactor_checkpoints' as never)
            .selectAll()
            .where('name' as never, '=', `retry_${t}` as never)
            .executeTakeFirstOrThrow()) as { checkpoint: string }
        ).checkpoint === last.checkpoint,
      'checkpoint at the last event',
    );
    await r.stop();
  });

  it('stores its checkpoint checkpointEveryMs after the first batch it has not stored, and what it handled when it stops; the next process starts there', async () => {
    const t = type();
    const name = `lazy_${t}`;
    const seen = new Map<string, string[]>();
    const stored = async () =>
      (
        (await s.handle.db
          .selectFrom('projection_checkpoints' as never)
          .select('checkpoint' as never)
          .where('name' as never, '=', name as never)
          .executeTakeFirst()) as { checkpoint: string } | undefined
      )?.checkpoint;
    const a = new ReactorRunner(s.store, db(), counting(name, t, seen), silent, { leaseTtlMs: 1000, checkpointEveryMs: 60_000 });
    await a.start();
    const first = await append(t, 3);
    await eventually(async () => first.every((id) => seen.has(id)), 'the first batch handled');
    const afterFirst = await stored();
    const handled = (await s.store.readAll({ filter: { eventTypes: [t] } })).at(-1)!.checkpoint;
    expect(afterFirst, 'the first batch not stored within the interval').not.to.equal(handled);
    const second = await append(t, 3);
    await eventually(async () => second.every((id) => seen.has(id)), 'the second batch handled');
    expect(await stored(), 'not stored within the interval').to.equal(afterFirst);
    await a.stop();
    const last = (await s.store.readAll({ filter: { eventTypes: [t] } })).at(-1)!;
    expect(await stored(), 'stored when it stopped').to.equal(last.checkpoint);
    const seenB = new Map<string, string[]>();
    const b = new ReactorRunner(s.store, db(), counting(name, t, seenB), silent, { leaseTtlMs: 1000, checkpointEveryMs: 60_000 });
    await b.start();
    const third = await append(t, 2);
    await eventually(async () => third.every((id) => seenB.has(id)), 'b handled the new events');
    expect(
      [...first, ...second].some((id) => seenB.has(id)),
      'b starts where a stored',
    ).to.equal(false);
    await b.stop();
  });

  it('isolates an event whose handling fails every time, records why, and handles the events after it', async () => {
    const t = type();
    const name = `poison_${t}`;
    const seen = new Map<string, string[]>();
    const ids = await append(t, 6);
    const poisoned = ids[2]!;
    let poisonTries = 0;
    const reactor: Reactor = {
      name,
      handles: [t],
      async handleBatch(batch) {
        if (batch.some((e) => e.id === poisoned)) {
          poisonTries++;
          throw new Error('invalid input syntax: \\u0000 cannot be converted to text');
        }
        for (const e of batch) seen.set(e.id, [...(seen.get(e.id) ?? []), name]);
      },
    };
    const r = new ReactorRunner(s.store, db(), reactor, silent, { leaseTtlMs: 1000, retryDelayMs: 5 });
    await r.start();
    const later = await append(t, 3);
    await eventually(async () => [...ids, ...later].filter((id) => id !== poisoned).every((id) => seen.has(id)), 'the others handled');
    expect(seen.has(poisoned)).to.equal(false);
    const rows = await eventually(async () => {
      const found = await db().selectFrom('isolated_work').selectAll().where('consumer', '=', name).execute();
      return found.length > 0 ? found : undefined;
    }, 'an isolated row');
    expect(rows!.map((x) => x.item)).to.deep.equal([poisoned]);
    expect(rows![0]!.error).to.match(/cannot be converted/);
    expect(rows![0]!.tries).to.equal(3);
    const triesSoFar = poisonTries;
    const after = await append(t, 1);
    await eventually(async () => seen.has(after[0]!), 'a later event handled');
    expect(poisonTries, 'the isolated event is not tried again').to.equal(triesSoFar);
    await r.stop();
  });

  it('retries a batch that failed for a transient reason (the database away) instead of isolating it', async () => {
    const t = type();
    const name = `transient_${t}`;
    const seen = new Map<string, string[]>();
    let failures = 5;
    const reactor: Reactor = {
      name,
      handles: [t],
      async handleBatch(batch) {
        if (failures-- > 0) throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
        for (const e of batch) seen.set(e.id, [...(seen.get(e.id) ?? []), name]);
      },
    };
    const ids = await append(t, 3);
    const r = new ReactorRunner(s.store, db(), reactor, silent, { leaseTtlMs: 1000, retryDelayMs: 5 });
    await r.start();
    await eventually(async () => ids.every((id) => seen.has(id)), 'all handled after the outage');
    expect(await db().selectFrom('isolated_work').selectAll().where('consumer', '=', name).execute()).to.deep.equal([]);
    await r.stop();
  });
});

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type Kysely, type KyselyPlugin, sql } from 'kysely';
import { ProjectionEngine } from '../../projections/shared/engine.js';
import { type HeldLease, LeaseRenewals } from '../../projections/shared/lease-renewals.js';
import { eventByEvent } from '../../projections/shared/projector.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { ev } from '../support/fixtures.js';
import { eventually } from '../support/numbers.js';
import { type StoreUnderTest, storeUnderTest } from '../support/stores.js';

// The leases of a process's runners are renewed together, in one statement (docs/event-store.md#reactors-and-leases).

describe('lease renewals', function () {
  this.timeout(30_000);
  let s: StoreUnderTest;
  let db: Kysely<ReadDb>;
  let statements = 0;
  const counting: KyselyPlugin = {
    transformQuery: (a) => {
      statements++;
      return a.node;
    },
    transformResult: async (a) => a.result,
  };
  before(async () => {
    s = await storeUnderTest();
    db = s.handle.db as unknown as Kysely<ReadDb>;
  });
  after(() => s.close());

  const leaseRow = async (name: string) =>
    (
      await sql<{ holder: string; left_s: number }>`
        select holder, extract(epoch from expires_at - now())::float8 as left_s from worker_leases where name = ${name}`.execute(db)
    ).rows[0];

  it('renews every lease held in one statement, and tells only the holder whose row another took', async () => {
    const names = [0, 1, 2].map((i) => `renewed_${i}_${randomUUID().slice(0, 8)}`);
    const holders = names.map(() => randomUUID());
    for (const [i, name] of names.entries())
      await sql`insert into worker_leases (name, holder, expires_at) values (${name}, ${holders[i]}, now() + interval '2 seconds')`.execute(
        db,
      );
    await sql`update worker_leases set holder = 'thief', expires_at = now() + interval '5 seconds' where name = ${names[1]}`.execute(db);
    const renewals = new LeaseRenewals(db.withPlugin(counting));
    const lost: [string, unknown][] = [];
    const held = (i: number): HeldLease => ({
      name: names[i]!,
      holder: holders[i]!,
      ttlMs: 60_000,
      renewing: () => true,
      lost: (err) => lost.push([names[i]!, err]),
    });
    const letGo = [0, 1, 2].map((i) => renewals.hold(held(i)));
    try {
      statements = 0;
      await renewals.renew();
      expect(statements, 'one statement for the three').to.equal(1);
      expect(lost).to.deep.equal([[names[1], null]]);
      for (const i of [0, 2]) expect((await leaseRow(names[i]!))!.left_s).to.be.greaterThan(50);
      const stolen = (await leaseRow(names[1]!))!;
      expect(stolen.holder).to.equal('thief');
      expect(stolen.left_s).to.be.lessThan(6);
    } finally {
      for (const f of letGo) f();
    }
  });

  it('leaves a lease whose runner gives it up, and one let go', async () => {
    const names = [0, 1].map((i) => `left_${i}_${randomUUID().slice(0, 8)}`);
    const holders = names.map(() => randomUUID());
    for (const [i, name] of names.entries())
      await sql`insert into worker_leases (name, holder, expires_at) values (${name}, ${holders[i]}, now() + interval '2 seconds')`.execute(
        db,
      );
    const renewals = new LeaseRenewals(db);
    const lost: unknown[] = [];
    const giveUp = renewals.hold({ name: names[0]!, holder: holders[0]!, ttlMs: 60_000, renewing: () => false, lost: (e) => lost.push(e) });
    const letGo = renewals.hold({ name: names[1]!, holder: holders[1]!, ttlMs: 60_000, renewing: () => true, lost: (e) => lost.push(e) });
    letGo();
    await renewals.renew();
    giveUp();
    expect(lost).to.deep.equal([]);
    for (const name of names) expect((await leaseRow(name))!.left_s).to.be.lessThan(3);
  });

  it('ends a runner whose lease another process took, and keeps renewing the others of the process', async () => {
    const type = `Renewed${randomUUID().slice(0, 8)}`;
    const projector = (name: string) => eventByEvent({ name, handles: new Set([type]), tables: [], apply: async () => undefined });
    const [a, b] = [`renew_a_${randomUUID().slice(0, 8)}`, `renew_b_${randomUUID().slice(0, 8)}`];
    const errors: unknown[] = [];
    const log = { debug() {}, info() {}, warn() {}, error: (o: { err?: unknown }) => void errors.push(o.err) };
    const renewals = new LeaseRenewals(db);
    // a TTL of 1 s: renewed every 333 ms
    const engine = new ProjectionEngine(s.store, db, [projector(a), projector(b)], log, {
      leaseTtlMs: 1000,
      renewals,
      restartDelayMs: 60_000,
    });
    await engine.start();
    try {
      await s.store.appendToStream(`renewed-${randomUUID()}`, [ev(type, {})], { expectedRevision: 'no_stream' });
      await sql`update worker_leases set holder = 'thief', expires_at = now() + interval '1 minute' where name = ${a}`.execute(db);
      await eventually(
        async () => errors.some((e) => (e as Error | undefined)?.name === 'LeaseLostError') || undefined,
        'a ends: its lease lost',
      );
      const expiresAt = async () =>
        (await sql<{ at: number }>`select extract(epoch from expires_at)::float8 as at from worker_leases where name = ${b}`.execute(db))
          .rows[0]!.at;
      const before = await expiresAt();
      await eventually(async () => ((await expiresAt()) > before ? true : undefined), "b's lease renewed again");
      expect((await leaseRow(a))!.holder).to.equal('thief');
      expect(errors.filter((e) => (e as Error | undefined)?.name === 'LeaseLostError')).to.have.length(1);
    } finally {
      await engine.stop();
    }
  });
});

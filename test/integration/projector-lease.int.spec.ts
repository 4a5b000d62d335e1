import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type Kysely, sql } from 'kysely';
import type { EventStorePort, RecordedEvent } from '../../application/ports/event-store.port.js';
import { allProjectors } from '../../infrastructure/capabilities/index.js';
import { type DatabaseHandle, openDatabase } from '../../infrastructure/db/database.js';
import { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import { ProjectionEngine } from '../../projections/shared/engine.js';
import { eventByEvent, type Projector } from '../../projections/shared/projector.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { ev } from '../support/fixtures.js';
import { startTestApp } from '../support/http.js';
import { FAST_MESSAGING_ENV, inbound, messagingLine } from '../support/messaging.js';
import { account, eventually } from '../support/numbers.js';
import { projectorsCaughtUp } from '../support/projections.js';
import { type StoreUnderTest, storeUnderTest } from '../support/stores.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe('projector lease', function () {
  this.timeout(60_000);
  let s: StoreUnderTest;
  let db: Kysely<ReadDb>;
  before(async () => {
    s = await storeUnderTest();
    db = s.handle.db as unknown as Kysely<ReadDb>;
    await sql`create table if not exists projector_lease_counts (event_id text primary key, engine text not null, n int not null)`.execute(
      db,
    );
  });
  after(async () => {
    await sql`drop table if exists projector_lease_counts`.execute(db);
    await s.close();
  });

  /** A projector that records which engine applied each event, and how often. */
  const recording = (name: string, type: string, engine: string): Projector =>
    eventByEvent({
      name,
      handles: new Set([type]),
      tables: [],
      async apply(trx: Kysely<ReadDb>, e: RecordedEvent) {
        await sql`insert into projector_lease_counts (event_id, engine, n) values (${e.id}, ${engine}, 1)
                on conflict (event_id) do update set n = projector_lease_counts.n + 1`.execute(trx);
      },
    });
  const appliedBy = async (engine: string) =>
    (await sql<{ event_id: string }>`select event_id from projector_lease_counts where engine = ${engine}`.execute(db)).rows.map(
      (r) => r.event_id,
    );

  it('lets one of two engines in two runtimes drive a projector; the other applies nothing until the first stops, then resumes from its checkpoint', async () => {
    const type = `Leased${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    const name = `leased_${type}`;
    // the second runtime: its own connection pool and event store on a server database, as another process
    // would have (PGlite has one connection per database, so there both share it)
    let second: DatabaseHandle | null = null;
    let store2: EventStorePort = s.store;
    if (process.env.DATABASE_URL && !process.env.EVENTSTORE_URL) {
      second = await openDatabase({ databaseUrl: process.env.DATABASE_URL, poolSize: 2 });
      store2 = new PgEventStore(second.db, { now: () => new Date() }, { pollIntervalMs: 20 });
    }
    const db2 = (second?.db ?? s.handle.db) as unknown as Kysely<ReadDb>;
    const a = new ProjectionEngine(s.store, db, [recording(name, type, 'a')], silent, { leaseTtlMs: 1000, batchSize: 5 });
    const b = new ProjectionEngine(store2, db2, [recording(name, type, 'b')], silent, { leaseTtlMs: 1000, batchSize: 5 });
    try {
      await a.start();
      await b.start(); // returns although b drives nothing: the lease is a's
      const lease = await db.selectFrom('worker_leases').select('holder').where('name', '=', name).execute();
      expect(lease).to.have.length(1);

      const append = async (n: number) => {
        const events = Array.from({ length: n }, () => ev(type));
        await s.store.appendToStream(`leased-${randomUUID()}`, events, { expectedRevision: 'no_stream' });
        return events.map((e) => e.id);
      };
      const first = await append(20);
      await eventually(async () => (await appliedBy('a')).length === 20, 'a applied the first events');
      // b polls for the lease at a third of its TTL: several polls pass while a holds it
      await new Promise((r) => setTimeout(r, 800));
      expect(await appliedBy('b'), 'b applied nothing while a held the lease').to.deep.equal([]);

      await a.stop();
      const next = await append(20);
      await eventually(async () => (await appliedBy('b')).length === 20, 'b took over and applied the next events');
      expect(new Set(await appliedBy('b'))).to.deep.equal(new Set(next));
      expect(new Set(await appliedBy('a'))).to.deep.equal(new Set(first));
      const counts = await sql<{ n: number }>`select n from projector_lease_counts`.execute(db);
      expect(
        counts.rows.every((r) => r.n === 1),
        'no event applied twice',
      ).to.equal(true);
      const cp = await db
        .selectFrom('projection_checkpoints')
        .select(['checkpoint', 'kind'])
        .where('name', '=', name)
        .executeTakeFirstOrThrow();
      expect(cp.kind).to.equal('projector');
    } finally {
      await a.stop();
      await b.stop();
      await second?.close();
    }
    expect(
      await db.selectFrom('worker_leases').selectAll().where('name', '=', name).execute(),
      'a clean stop frees the lease',
    ).to.deep.equal([]);
  });

  it("tells while it holds a projector's lease (until when, at its taking and each renewal; null once let go) and each batch's commit", async () => {
    const type = `Held${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    const name = `held_${type}`;
    const e = new ProjectionEngine(s.store, db, [recording(name, type, 'held')], silent, { leaseTtlMs: 1000 });
    const held: (number | null)[] = [];
    const commits: string[] = [];
    e.onLease({
      held: (n, until) => {
        if (n === name) held.push(until);
      },
      committing: (n, phase) => {
        if (n === name) commits.push(phase);
      },
    });
    const before = performance.now();
    try {
      await e.start();
      expect(held).to.have.length(1);
      // the taking's statement was sent after `before`: no other process can take the lease for a TTL from then
      expect(held[0]).to.be.within(before + 1000, performance.now() + 1000);
      await eventually(async () => held.length >= 2, 'a renewal');
      expect(held[1]).to.be.greaterThan(held[0]!);
      await s.store.appendToStream(`held-${randomUUID()}`, [ev(type)], { expectedRevision: 'no_stream' });
      await eventually(async () => (await appliedBy('held')).length === 1, 'the event applied');
      expect(commits).to.deep.equal(['start', 'end']);
    } finally {
      await e.stop();
    }
    expect(held.at(-1)).to.equal(null);
  });
});

describe('guarded projector statements', function () {
  this.timeout(60_000);

  it('change nothing when every event is applied a second time, newest first (a replay of the whole log, reversed)', async () => {
    const app = await startTestApp(FAST_MESSAGING_ENV);
    try {
      // texts: a conversation, messages moved by receipts, and an opt-out that is lifted again
      const line = await messagingLine(app, { name: 'Replayed texts' });
      const contact = '+13125559990';
      await inbound(app, { from: contact, to: line.phoneNumber, body: 'hello' });
      await app.call('POST', '/v1/messages', { key: line.key, body: { agent_id: line.agentId, to_number: contact, body: 'hi there' } });
      await inbound(app, { from: contact, to: line.phoneNumber, body: 'STOP' });
      await inbound(app, { from: contact, to: line.phoneNumber, body: 'START' });
      const acc = await account(app, { creditMicros: 10_000_000 });
      const key = acc.apiKey;
      const agent = (await app.call('POST', '/v1/agents', { key, body: { name: 'Replayed' } })).body as { id: string };
      await app.call('PATCH', `/v1/agents/${agent.id}`, { key, body: { voiceMode: 'hosted', systemPrompt: 'x' } });
      const gone = (await app.call('POST', '/v1/agents', { key, body: { name: 'Gone' } })).body as { id: string };
      await app.call('DELETE', `/v1/agents/${gone.id}`, { key });
      const made = (await app.call('POST', '/v1/api-keys', { key, body: { name: 'temp' } })).body as { id: string };
      await app.call('DELETE', `/v1/api-keys/${made.id}`, { key });
      const n = (await app.call('POST', '/v1/numbers', { key, body: { areaCode: '617' } })).body as { id: string };
      expect(n.id).to.be.a('string');
      await app.call('POST', `/v1/agents/${agent.id}/numbers`, { key, body: { numberId: n.id } });
      const t = (await app.call('POST', '/v1/sip-trunks', { key, body: { name: 'PBX' } })).body as { id: string };
      await app.call('PATCH', `/v1/numbers/${n.id}`, { key, body: { sipTrunkId: t.id } });
      await app.call('PATCH', `/v1/sip-trunks/${t.id}`, { key, body: { name: 'Office PBX' } });

      const db = app.rt.database.db as unknown as Kysely<ReadDb>;
      await eventually(
        async () =>
          (await db.selectFrom('opt_outs').select('opted_out').where('account_id', '=', line.accountId).execute()).some(
            (r) => r.opted_out === false,
          ),
        'the lifted opt-out projected',
      );
      // every projector past the last of its events, the lagging ones too (docs/event-store.md#lagging-projectors)
      await projectorsCaughtUp(app, allProjectors);
      await app.rt.engine.stop();
      // every projector is guarded, the analytics ones included (docs/analytics.md)
      const guarded = allProjectors;
      const snapshot = async () => {
        const out: Record<string, string[]> = {};
        for (const p of guarded) {
          for (const table of p.tables) {
            const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db);
            out[table] = rows.rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).sort();
          }
        }
        return out;
      };
      const before = await snapshot();
      expect(before.agents!.length).to.be.at.least(2);
      const lineOptOuts = before.opt_outs!.map((r) => JSON.parse(r)).filter((r) => r.account_id === line.accountId);
      expect(lineOptOuts.map((r) => r.opted_out)).to.deep.equal([false]);
      // newest first: an unguarded statement would leave the row as its oldest event had it
      const events = (await app.rt.store.readAll({ maxCount: 100_000 })).reverse();
      for (const p of guarded) {
        await db.transaction().execute(async (trx) => {
          for (const e of events) if (p.handles.has(e.type)) await p.apply(trx, e);
        });
      }
      expect(await snapshot()).to.deep.equal(before);
    } finally {
      await app.close();
    }
  });
});

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type Kysely, sql } from 'kysely';
import { type Checkpoint, type EventStorePort, type RecordedEvent, START } from '../../application/ports/event-store.port.js';
import { accountsProjector } from '../../projections/accounts/accounts.projector.js';
import { agentsProjector } from '../../projections/agents/agents.projector.js';
import { ProjectionEngine, ReadModelWaiter } from '../../projections/shared/engine.js';
import { eventByEvent, type Projector } from '../../projections/shared/projector.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { ev } from '../support/fixtures.js';
import { startTestApp } from '../support/http.js';
import { eventually } from '../support/numbers.js';
import { type StoreUnderTest, storeUnderTest } from '../support/stores.js';

/** What a projector's committed batch told the process: how far, and its events' names. */
type Told = { checkpoint: Checkpoint; types: readonly string[] };

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * A projector that counts how often it applied each event (a table of its own), and can be told to crash in
 * the middle of a batch: the test double of a process dying between two row writes.
 */
function countingProjector(name: string, type: string, crash: { atEvent: number; times: number }) {
  let applied = 0;
  const p: Projector = eventByEvent({
    name,
    handles: new Set([type]),
    tables: ['agents'],
    async apply(db: Kysely<ReadDb>, e: RecordedEvent) {
      applied++;
      if (applied === crash.atEvent && crash.times > 0) {
        crash.times--;
        throw new Error('simulated crash mid-batch');
      }
      await sql`insert into projection_test_counts (event_id, n) values (${e.id}, 1)
                on conflict (event_id) do update set n = projection_test_counts.n + 1`.execute(db);
    },
  });
  return p;
}

describe('projection engine', () => {
  let sut: StoreUnderTest;
  let store: EventStorePort;
  let db: Kysely<ReadDb>;
  before(async () => {
    sut = await storeUnderTest();
    store = sut.store;
    db = sut.handle.db as unknown as Kysely<ReadDb>;
    await sql`create table if not exists projection_test_counts (event_id text primary key, n int not null)`.execute(db);
  });
  after(async () => {
    await sql`drop table if exists projection_test_counts`.execute(db);
    await sut.close();
  });
  beforeEach(async () => {
    await sql`delete from projection_test_counts`.execute(db);
  });

  it('rolls back a batch that crashes midway with its checkpoint, and applies every event exactly once after restart', async () => {
    const type = `Counted${randomUUID().slice(0, 8)}`;
    const events = Array.from({ length: 30 }, () => ev(type));
    await store.appendToStream(`counted-${randomUUID()}`, events, { expectedRevision: 'no_stream' });
    const crash = { atEvent: 17, times: 1 };
    const p = countingProjector(`counting_${randomUUID().slice(0, 8)}`, type, crash);
    const engine = new ProjectionEngine(store, db, [p], silent, { restartDelayMs: 10, batchSize: 10 });
    await engine.start();
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { c } = (await db
        .selectFrom('projection_test_counts' as never)
        .select(sql<number>`count(*)::int`.as('c'))
        .executeTakeFirstOrThrow()) as { c: number };
      if (c === 30 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await engine.stop();
    expect(crash.times, 'the crash happened').to.equal(0);
    const rows = await sql<{ event_id: string; n: number }>`select event_id, n from projection_test_counts`.execute(db);
    expect(rows.rows).to.have.length(30);
    expect(
      rows.rows.every((r) => r.n === 1),
      'no event applied twice',
    ).to.equal(true);
    expect(new Set(rows.rows.map((r) => r.event_id))).to.deep.equal(new Set(events.map((e) => e.id)));
  });

  it('lets only one of two engines running the same projector commit each batch (checkpoint compare-and-set)', async () => {
    const type = `Raced${randomUUID().slice(0, 8)}`;
    const name = `raced_${randomUUID().slice(0, 8)}`;
    await store.appendToStream(
      `raced-${randomUUID()}`,
      Array.from({ length: 40 }, () => ev(type)),
      { expectedRevision: 'no_stream' },
    );
    const a = new ProjectionEngine(store, db, [countingProjector(name, type, { atEvent: 0, times: 0 })], silent, {
      restartDelayMs: 10,
      batchSize: 5,
    });
    const b = new ProjectionEngine(store, db, [countingProjector(name, type, { atEvent: 0, times: 0 })], silent, {
      restartDelayMs: 10,
      batchSize: 5,
    });
    await Promise.all([a.start(), b.start()]);
    const counted = async () => (await sql<{ n: number }>`select n from projection_test_counts`.execute(db)).rows;
    await eventually(async () => (await counted()).length >= 40, 'the 40 events counted');
    await Promise.all([a.stop(), b.stop()]);
    const rows = await counted();
    expect(rows).to.have.length(40);
    expect(rows.every((r) => r.n === 1)).to.equal(true);
  });

  it('waits for read-your-writes and times out with READ_MODEL_TIMEOUT', async () => {
    const type = `Waited${randomUUID().slice(0, 8)}`;
    const p = countingProjector(`waited_${randomUUID().slice(0, 8)}`, type, { atEvent: 0, times: 0 });
    const waiter = new ReadModelWaiter(db, [p], null, { timeoutMs: 200, pollMs: 10 });
    const r = await store.appendToStream(`waited-${randomUUID()}`, [ev(type)], { expectedRevision: 'no_stream' });
    const err = await waiter.waitFor(r.checkpoint, [type]).catch((e: unknown) => e);
    expect(err).to.have.property('code', 'READ_MODEL_TIMEOUT');
    const asTable = await waiter.waitFor(r.checkpoint, [type], { tables: [...p.tables] }).catch((e: unknown) => e);
    expect(asTable, 'a lookup of the table it writes waits for it').to.have.property('code', 'READ_MODEL_TIMEOUT');
    await waiter.waitFor(r.checkpoint, [type], { tables: ['a_table_it_does_not_write'] }); // a lookup elsewhere does not wait
    expect(await waiter.waitForRow(async () => null, { tables: [...p.tables], withinMs: 50 }), 'never there').to.equal(null);
    let looks = 0;
    expect(await waiter.waitForRow(async () => (++looks >= 3 ? looks : null), { tables: [...p.tables], withinMs: 5000 })).to.equal(3);
    const engine = new ProjectionEngine(store, db, [p], silent);
    await engine.start();
    await new ReadModelWaiter(db, [p], (fn) => engine.onAdvanced(fn), { timeoutMs: 5000 }).waitFor(r.checkpoint, [type]);
    await engine.stop();
    await waiter.waitFor(r.checkpoint, ['SomethingNobodyProjects']); // no projector handles it: nothing to wait for
  });

  /** Runs `p` in an engine of its own and hears what its batches tell; `appended` waits for the batch with that checkpoint. */
  async function hearing(p: Projector, run: (h: { told: Told[]; appended: (c: Checkpoint) => Promise<Told> }) => Promise<void>) {
    const engine = new ProjectionEngine(store, db, [p], silent);
    await engine.start();
    const told: Told[] = [];
    const off = engine.onAdvanced((name, checkpoint, types) => {
      if (name === p.name) told.push({ checkpoint, types });
    });
    const appended = async (c: Checkpoint) => {
      const deadline = Date.now() + 10_000;
      while (!told.some((t) => t.checkpoint === c) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 10));
      const t = told.find((x) => x.checkpoint === c);
      expect(t, `a batch told up to ${c}`).to.not.equal(undefined);
      return t!;
    };
    try {
      await run({ told, appended });
    } finally {
      off();
      await engine.stop();
    }
  }

  it("tells each committed batch with the batch's event types (what the delivery worker wakes on)", async () => {
    const [a, b] = [`Told${randomUUID().slice(0, 8)}`, `Told${randomUUID().slice(0, 8)}`];
    const p = eventByEvent({ name: `told_${randomUUID().slice(0, 8)}`, handles: new Set([a, b]), tables: ['agents'], async apply() {} });
    await hearing(p, async ({ told, appended }) => {
      const r = await store.appendToStream(`told-${randomUUID()}`, [ev(a), ev(b), ev(a)], { expectedRevision: 'no_stream' });
      await appended(r.checkpoint);
      expect(told.at(-1)?.checkpoint).to.equal(r.checkpoint);
      expect([...new Set(told.flatMap((t) => t.types))].sort()).to.deep.equal([a, b].sort());
    });
  });

  it('tells an event under the name its projector gives it, where one is given (docs/event-store.md#wake-ups)', async () => {
    const type = `Named${randomUUID().slice(0, 8)}`;
    const p: Projector = {
      ...eventByEvent({ name: `named_${randomUUID().slice(0, 8)}`, handles: new Set([type]), tables: ['agents'], async apply() {} }),
      tells: (e) => ((e.data as { claimed?: boolean }).claimed ? `${type}(claimed)` : type),
    };
    await hearing(p, async ({ appended }) => {
      const claimed = await store.appendToStream(`named-${randomUUID()}`, [ev(type, { claimed: true })], { expectedRevision: 'no_stream' });
      expect((await appended(claimed.checkpoint)).types).to.deep.equal([`${type}(claimed)`]);
      const plain = await store.appendToStream(`named-${randomUUID()}`, [ev(type, { claimed: false })], { expectedRevision: 'no_stream' });
      expect((await appended(plain.checkpoint)).types).to.deep.equal([type]);
    });
  });

  it('looks again at once when word of an advance comes while it is looking', async () => {
    const p = countingProjector(`word_${randomUUID().slice(0, 8)}`, 'Worded', { atEvent: 0, times: 0 });
    const listeners = new Set<(projector: string, checkpoint: Checkpoint) => void>();
    const advanced = (fn: (projector: string, checkpoint: Checkpoint) => void) => {
      listeners.add(fn);
      return () => listeners.delete(fn);
    };
    const waiter = new ReadModelWaiter(db, [p], advanced, { timeoutMs: 60_000, pollMs: 60_000 });
    let looks = 0;
    const find = async () => {
      looks++;
      if (looks > 1) return 'found';
      // the projector advances while this look is on its way: nothing waits for word yet
      for (const fn of listeners) fn(p.name, START);
      return null;
    };
    const outcome = await Promise.race([
      waiter.waitForRow(find, { tables: [...p.tables], withinMs: 60_000 }),
      new Promise((r) => setTimeout(() => r('still waiting after 5 s'), 5_000)),
    ]);
    expect(outcome).to.equal('found');
  });

  /** a read model database that counts its reads of the stored checkpoints, and word of advances to tell */
  const readsAndWord = () => {
    const reads = { n: 0 };
    const counting = {
      selectFrom: (t: 'projection_checkpoints') => {
        reads.n++;
        return db.selectFrom(t);
      },
    } as unknown as Kysely<ReadDb>;
    const listeners = new Set<(projector: string, checkpoint: Checkpoint) => void>();
    const advanced = (fn: (projector: string, checkpoint: Checkpoint) => void) => {
      listeners.add(fn);
      return () => listeners.delete(fn);
    };
    return { counting, reads, advanced, listeners };
  };

  it('reads no stored checkpoint when it hears every advance (embedded), and still reads when no word comes', async () => {
    const type = `Heard${randomUUID().slice(0, 8)}`;
    const p = countingProjector(`heard_${randomUUID().slice(0, 8)}`, type, { atEvent: 0, times: 0 });
    const { counting, reads, advanced, listeners } = readsAndWord();
    const tell = (checkpoint: Checkpoint) =>
      setTimeout(() => {
        for (const fn of listeners) fn(p.name, checkpoint);
      }, 20);
    const append = () => store.appendToStream(`heard-${randomUUID()}`, [ev(type)], { expectedRevision: 'no_stream' });

    const hearing = new ReadModelWaiter(counting, [p], advanced, { timeoutMs: 5000, pollMs: 60_000, hearsEveryAdvance: true });
    const first = await append();
    tell(first.checkpoint);
    await hearing.waitFor(first.checkpoint, [type]);
    expect(reads.n, 'answered by word alone').to.equal(0);

    const asking = new ReadModelWaiter(counting, [p], advanced, { timeoutMs: 5000, pollMs: 60_000 });
    const second = await append();
    tell(second.checkpoint);
    await asking.waitFor(second.checkpoint, [type]);
    expect(reads.n, 'without the option, a wait reads the stored checkpoints first').to.equal(1);

    // waits asked for in one turn read the stored checkpoints together, in one statement
    reads.n = 0;
    const together = new ReadModelWaiter(counting, [p], advanced, { timeoutMs: 5000, pollMs: 60_000 });
    const written = await Promise.all([append(), append(), append()]);
    for (const w of written) tell(w.checkpoint);
    await Promise.all(written.map((w) => together.waitFor(w.checkpoint, [type])));
    expect(reads.n, 'three waits, one read').to.equal(1);

    const unheard = new ReadModelWaiter(counting, [p], advanced, { timeoutMs: 300, pollMs: 20, hearsEveryAdvance: true });
    const third = await append();
    const err = await unheard.waitFor(third.checkpoint, [type]).catch((e: unknown) => e);
    expect(err).to.have.property('code', 'READ_MODEL_TIMEOUT');
    expect(reads.n, 'no word: it reads every pollMs').to.be.greaterThan(2);
  });

  it('says how far a read model reflects the log: as heard where every advance is heard, else as stored', async () => {
    const name = `reflected_${randomUUID().slice(0, 8)}`;
    const { counting, reads, advanced, listeners } = readsAndWord();
    const tell = (checkpoint: Checkpoint) => {
      for (const fn of listeners) fn(name, checkpoint);
    };
    const p = { name, handles: new Set<string>(), tables: [] };
    await db.insertInto('projection_checkpoints').values({ name, kind: 'projector', checkpoint: '5/5', updated_at: new Date() }).execute();

    const hearing = new ReadModelWaiter(counting, [p], advanced, { timeoutMs: 1000, hearsEveryAdvance: true });
    expect(await hearing.reflected(name), 'stored, before any word').to.equal('5/5');
    tell('7/7');
    expect(await hearing.reflected(name)).to.equal('7/7');
    tell('6/6'); // word of an older batch, late
    expect(await hearing.reflected(name)).to.equal('7/7');
    expect(reads.n, 'read once, until the first word').to.equal(1);

    reads.n = 0;
    const asking = new ReadModelWaiter(counting, [p], advanced, { timeoutMs: 1000 });
    tell('9/9');
    await db.updateTable('projection_checkpoints').set({ checkpoint: '3/3' }).where('name', '=', name).execute(); // rebuilt
    expect(await asking.reflected(name), 'as stored, gone back').to.equal('3/3');
    expect(reads.n).to.equal(1);
    await db.deleteFrom('projection_checkpoints').where('name', '=', name).execute();
  });
});

describe('rebuild', () => {
  it('replays a projector into fresh tables that equal the live ones, then swaps them in', async () => {
    const app = await startTestApp();
    try {
      const { apiKey } = await app.newAccount('Rebuilt');
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await app.call('POST', '/v1/agents', { key: apiKey, body: { name: `R${i}` } })).body.id);
      await app.call('PATCH', `/v1/agents/${ids[0]}`, { key: apiKey, body: { voiceMode: 'hosted', systemPrompt: 'x' } });
      await app.call('DELETE', `/v1/agents/${ids[1]}`, { key: apiKey });
      const db = app.rt.database.db as unknown as Kysely<ReadDb>;
      const before = await db.selectFrom('agents').selectAll().orderBy('agent_id').execute();
      const progress: number[] = [];
      const report = await rebuildProjector(db, app.rt.store, agentsProjector, { onProgress: (done) => progress.push(done) });
      expect(report.equal).to.equal(true);
      expect(report.differences).to.deep.equal({ agents: 0 });
      // every agent event in the store (a shared EventStoreDB may hold earlier suites' events too)
      const agentEvents = (await app.rt.store.readAll({ filter: { eventTypes: [...agentsProjector.handles] }, maxCount: 100_000 })).length;
      expect(agentEvents).to.be.at.least(6 + 2 + 1);
      expect(report.events).to.equal(agentEvents);
      expect(progress.at(-1)).to.equal(agentEvents);
      expect(await db.selectFrom('agents').selectAll().orderBy('agent_id').execute()).to.deep.equal(before);
      // the service keeps working on the swapped tables
      expect((await app.call('GET', `/v1/agents/${ids[0]}`, { key: apiKey })).body.voiceMode).to.equal('hosted');
    } finally {
      await app.close();
    }
  });

  it('reports a difference when a live table was tampered with, and repairs it by the swap', async () => {
    const app = await startTestApp();
    try {
      const { accountId } = await app.newAccount('Tampered');
      const db = app.rt.database.db as unknown as Kysely<ReadDb>;
      await app.rt.engine.stop();
      await db.updateTable('accounts').set({ name: 'Hacked' }).where('account_id', '=', accountId).execute();
      const check = await rebuildProjector(db, app.rt.store, accountsProjector, { checkOnly: true });
      expect(check.equal).to.equal(false);
      expect(check.differences!.accounts).to.equal(2);
      expect(check.swapped).to.equal(false);
      const fix = await rebuildProjector(db, app.rt.store, accountsProjector);
      expect(fix.swapped).to.equal(true);
      const row = await db.selectFrom('accounts').select('name').where('account_id', '=', accountId).executeTakeFirstOrThrow();
      expect(row.name).to.equal('Tampered');
    } finally {
      await app.close();
    }
  });
});

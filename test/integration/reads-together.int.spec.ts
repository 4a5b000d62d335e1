import { expect } from 'chai';
import { type Kysely, sql } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../infrastructure/db/database.js';
import { costMetrics } from '../../infrastructure/observability/metrics.js';

// Reads awaited together (docs/event-store.md#reads-together): embedded, the statements sent through `readTogether`
// in one turn of the event loop go to PGlite as one message; on a server they run on the pool as any other.

type Row = { id: number; label: string };
type Tables = { rt_a: Row; rt_b: Row };
const loose = (db: Kysely<never>) => db as unknown as Kysely<Tables>;
const messagesSoFar = async () => (await costMetrics.embeddedMessages.get()).values.reduce((sum, v) => sum + v.value, 0);

describe('reads together', function () {
  this.timeout(60_000);
  let h: DatabaseHandle;
  let together: Kysely<Tables>;
  let db: Kysely<Tables>;
  const embedded = () => h.kind === 'pglite';

  before(async function () {
    if (process.env.EVENTSTORE_URL) this.skip(); // the read side's database is the same as in (b)
    const url = process.env.DATABASE_URL;
    h = await openDatabase(url ? { databaseUrl: url, poolSize: 2 } : { thread: process.env.PGLITE_THREAD !== 'false' });
    together = loose(h.readTogether as never);
    db = loose(h.db as never);
    await sql`drop table if exists rt_a, rt_b`.execute(h.db);
    await sql`create table rt_a (id int primary key, label text not null)`.execute(h.db);
    await sql`create table rt_b (id int primary key, label text not null)`.execute(h.db);
    await db
      .insertInto('rt_a')
      .values([
        { id: 1, label: 'a1' },
        { id: 2, label: 'a2' },
      ])
      .execute();
    await db.insertInto('rt_b').values({ id: 1, label: 'b1' }).execute();
  });
  after(async () => {
    if (!h) return;
    await sql`drop table if exists rt_a, rt_b`.execute(h.db);
    await h.close();
  });

  const three = () =>
    Promise.all([
      together.selectFrom('rt_a').selectAll().where('id', '=', 2).execute(),
      together.selectFrom('rt_b').select('label').where('id', '>=', 0).execute(),
      together.selectFrom('rt_a').select('id').where('label', '=', 'none').execute(),
    ]);

  it('answers each statement its own rows, embedded in one message, and the same again once prepared', async () => {
    for (let run = 0; run < 3; run++) {
      const before = await messagesSoFar();
      const [a, b, none] = await three();
      expect(a).to.deep.equal([{ id: 2, label: 'a2' }]);
      expect(b).to.deep.equal([{ label: 'b1' }]);
      expect(none).to.deep.equal([]);
      if (embedded()) expect((await messagesSoFar()) - before, `run ${run}`).to.equal(1);
    }
    // a statement prepared together runs alone too
    expect(await together.selectFrom('rt_a').select('label').where('id', '=', 1).execute()).to.deep.equal([{ label: 'a1' }]);
  });

  it('fails the statement that failed, embedded all of those sent with it, and the next ones run', async () => {
    const results = await Promise.allSettled([
      together.selectFrom('rt_a').selectAll().where('id', '=', 1).execute(),
      sql`select 1 / (id - id) as x from rt_b`.execute(together),
      together.selectFrom('rt_b').selectAll().where('id', '=', 1).execute(),
    ]);
    expect(results[1]).to.have.property('status', 'rejected');
    expect((results[1] as PromiseRejectedResult).reason).to.have.property('code', '22012');
    if (embedded()) expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected', 'rejected']);
    const [a, b] = await three();
    expect(a).to.deep.equal([{ id: 2, label: 'a2' }]);
    expect(b).to.deep.equal([{ label: 'b1' }]);
  });

  it('answers a table that changed shape since its statements were prepared', async () => {
    await three();
    await sql`alter table rt_a add column extra text not null default 'x'`.execute(h.db);
    try {
      const [a] = await three();
      expect(a).to.deep.equal([{ id: 2, label: 'a2', extra: 'x' }]);
    } finally {
      await sql`alter table rt_a drop column extra`.execute(h.db);
    }
  });

  it("waits for another caller's transaction to end instead of reading inside it", async () => {
    let inserted!: () => void;
    const insertedNow = new Promise<void>((r) => {
      inserted = r;
    });
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const tx = db
      .transaction()
      .execute(async (t) => {
        await t.insertInto('rt_b').values({ id: 99, label: 'rolled back' }).execute();
        inserted();
        await released;
        throw new Error('roll it back');
      })
      .catch((err: Error) => err.message);
    await insertedNow;
    const reads = Promise.all([together.selectFrom('rt_b').select('id').execute(), together.selectFrom('rt_a').select('id').execute()]);
    release();
    expect(await tx).to.equal('roll it back');
    const [b, a] = await reads;
    expect(b.map((r) => r.id)).to.deep.equal([1]);
    expect(a.map((r) => r.id).sort()).to.deep.equal([1, 2]);
  });

  it('refuses a transaction', async function () {
    if (!embedded()) this.skip(); // on a server it is the pool, as the read side
    const err = await together
      .transaction()
      .execute(async () => undefined)
      .catch((e: Error) => e);
    expect(err)
      .to.be.instanceOf(Error)
      .with.property('message')
      .that.matches(/outside transactions/);
  });
});

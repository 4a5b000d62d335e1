import { expect } from 'chai';
import { type Kysely, sql } from 'kysely';
import type { DatabaseHandle } from '../../infrastructure/db/database.js';
import { PLANNED_EACH_RUN } from '../../infrastructure/db/prepared.js';

// Prepared statements (docs/event-store.md#prepared-statements), the same rules embedded and on a server: the tests
// below run in test/integration/pglite-thread.int.spec.ts (PGlite in the process's thread and on its own) and
// test/integration/server-prepared.int.spec.ts (a PostgreSQL server, one connection). The handle has the tables
// `kinds` (below) and `counter (id int primary key, n int not null)`, emptied before each test, with counter 1 at 0.

const db = (h: DatabaseHandle) => h.db as unknown as Kysely<any>;

export const KINDS_TABLE = sql`create table kinds (
  id int primary key, at timestamptz, doc jsonb, big int8, amount numeric, bytes bytea, tags text[], flag boolean, ref uuid, note text)`;
export const KINDS_ROW = {
  id: 1,
  at: new Date('2026-11-27T10:11:12.345Z'),
  doc: JSON.stringify({ a: 1, b: ['x', { c: null }], s: 'é "quoted"' }),
  big: 9_007_199_254n,
  amount: '12.3400',
  bytes: Buffer.from([0, 1, 2, 254, 255]),
  tags: ['one', 'two, with comma', 'three "q"'],
  flag: true,
  ref: '0b6f6a3e-6d0e-4a59-9b5e-0c1f0d1e2f3a',
  note: null,
};
const ROW = KINDS_ROW;

/** the tables the tests below use, made once per database */
export async function createTestTables(db: Kysely<any>): Promise<void> {
  await KINDS_TABLE.execute(db);
  await sql`create table counter (id int primary key, n int not null)`.execute(db);
}

/** both tables emptied, and counter 1 at 0 */
export async function emptyTestTables(db: Kysely<any>): Promise<void> {
  await sql`truncate kinds, counter`.execute(db);
  await sql`insert into counter values (1, 0)`.execute(db);
}

export function preparedStatementTests(handle: () => DatabaseHandle): void {
  let h: DatabaseHandle;
  beforeEach(() => {
    h = handle();
  });

  it('prepares a statement once and binds it after: the same text with other values answers their rows', async () => {
    await db(h)
      .insertInto('kinds')
      .values([1, 2, 3].map((id) => ({ ...ROW, id, note: `n${id}` })))
      .execute();
    const note = async (id: number) => (await db(h).selectFrom('kinds').select('note').where('id', '=', id).executeTakeFirst())?.note;
    for (let round = 0; round < 8; round++) expect(await Promise.all([1, 2, 3, 4].map(note))).to.deep.equal(['n1', 'n2', 'n3', undefined]);
    // more texts than the session keeps prepared (each run twice: on a server a text is prepared when it runs a
    // second time): the oldest are closed, and every one still runs
    for (let k = 0; k < 520; k++)
      for (const again of [0, 1]) {
        const r = await sql<{
          v: number;
        }>`select ${k}::int + ${k % 7}::int + ${again}::int as v, ${'x'.repeat(k % 3)} as pad, ${k} as k${sql.raw(String(k))}`.execute(
          h.db,
        );
        expect(r.rows[0]!.v).to.equal(k + (k % 7) + again);
      }
    expect(await note(2)).to.equal('n2');
    const held = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(h.db);
    expect(held.rows[0]!.n).to.be.within(400, 500);
  });

  it('never prepares a statement marked to be planned at each run; the same text unmarked is prepared', async () => {
    const prepared = async (text: string) =>
      (await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements where statement like ${`%${text}%`}`.execute(h.db))
        .rows[0]!.n;
    const run = (marked: boolean) =>
      sql`${sql.raw(marked ? PLANNED_EACH_RUN : '')} select id from kinds where id = ${1} and note is distinct from ${'each-run probe'}`.execute(
        h.db,
      );
    for (let i = 0; i < 3; i++) await run(true);
    expect(await prepared("'each-run probe'")).to.equal(0);
    expect(await prepared('note is distinct from $2')).to.equal(0);
    for (let i = 0; i < 3; i++) await run(false);
    expect(await prepared('note is distinct from $2')).to.equal(1);
  });

  it('prepares afresh a statement whose table changed shape, at once outside a transaction', async () => {
    await sql`create table shapes (id int primary key, a text)`.execute(h.db);
    await sql`insert into shapes values (1, 'a')`.execute(h.db);
    const all = () => db(h).selectFrom('shapes').selectAll().where('id', '=', 1).execute();
    expect(await all()).to.deep.equal([{ id: 1, a: 'a' }]);
    expect(await all()).to.deep.equal([{ id: 1, a: 'a' }]);
    await sql`alter table shapes add column b text default 'b'`.execute(h.db);
    expect(await all()).to.deep.equal([{ id: 1, a: 'a', b: 'b' }]);
    await sql`alter table shapes add column c int default 3`.execute(h.db);
    // in a transaction the stale statement fails it once (nothing else was done); the next one runs
    const inTx = await h.db
      .transaction()
      .execute(async (trx) => (trx as unknown as Kysely<any>).selectFrom('shapes').selectAll().where('id', '=', 1).execute())
      .then(
        () => null,
        (e: { code?: string }) => e.code,
      );
    expect(inTx).to.equal('0A000');
    expect(await all()).to.deep.equal([{ id: 1, a: 'a', b: 'b', c: 3 }]);
    // a pipeline that binds the stale statement runs again, parsed afresh, instead of failing every time
    await sql`alter table shapes add column d int default 4`.execute(h.db);
    await h.pipeline!([db(h).selectFrom('shapes').selectAll().where('id', '=', 1).compile()]);
    expect(await all()).to.deep.equal([{ id: 1, a: 'a', b: 'b', c: 3, d: 4 }]);
    await sql`drop table shapes`.execute(h.db);
  });

  it("prepares a pipelined batch's statements, and keeps none of a batch that failed", async () => {
    const prepared = async (text: string) =>
      (await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements where statement like ${`%${text}%`}`.execute(h.db))
        .rows[0]!.n;
    const bump = (by: number) =>
      db(h)
        .updateTable('counter')
        .set({ n: sql`n + ${by}` })
        .where('id', '=', 1)
        .compile();
    const failing = db(h).insertInto('counter').values({ id: 1, n: 0 }).compile(); // the key is taken
    for (let i = 0; i < 3; i++) await h.pipeline!([bump(1), bump(2)]);
    expect((await db(h).selectFrom('counter').select('n').executeTakeFirstOrThrow()).n).to.equal(9);
    expect(await prepared('set "n" = n + $1')).to.equal(1);
    // a batch that failed changed nothing. The statement it parsed under a name is closed with the next message
    // (embedded), or closed and parsed again by the next batch that sends it (on a server, where the session keeps it)
    const err = await h.pipeline!([bump(10), failing]).catch((e: { code?: string }) => e.code);
    expect(err).to.equal('23505');
    expect((await db(h).selectFrom('counter').select('n').executeTakeFirstOrThrow()).n).to.equal(9);
    if (h.kind === 'pglite') expect(await prepared('insert into "counter"')).to.equal(0);
    await h.pipeline!([bump(1), db(h).insertInto('counter').values({ id: 2, n: 0 }).compile()]);
    await h.pipeline!([bump(1), db(h).insertInto('counter').values({ id: 3, n: 0 }).compile()]);
    expect((await db(h).selectFrom('counter').select(sql<number>`sum(n)::int`.as('n')).executeTakeFirstOrThrow()).n).to.equal(11);
    expect(await prepared('insert into "counter"')).to.equal(1);
  });

  it('keeps no statement that failed to parse in an aborted transaction', async () => {
    await db(h).insertInto('kinds').values(ROW).execute();
    const text = () => db(h).selectFrom('kinds').select(['id', 'flag']).where('id', '=', 1).where('flag', '=', true).execute();
    await h.db
      .transaction()
      .execute(async (trx) => {
        const t = trx as unknown as Kysely<any>;
        await t
          .insertInto('kinds')
          .values(ROW)
          .execute()
          .catch(() => undefined); // the transaction is aborted now
        await t.selectFrom('kinds').select(['id', 'flag']).where('id', '=', 1).where('flag', '=', true).execute();
      })
      .catch(() => undefined);
    expect(await text()).to.deep.equal([{ id: 1, flag: true }]);
  });
}

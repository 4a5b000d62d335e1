import { expect } from 'chai';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { CompiledOnce } from '../../projections/shared/compiled-once.js';
import { indexed } from '../../projections/shared/read-db.js';

interface Db {
  lines: { account_id: string; line_id: string; status: string; seq: number };
}

/** A Kysely that compiles and never connects. */
const db = new Kysely<Db>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (k) => new PostgresIntrospector(k),
  },
});

type V = { accountId: string; lineId: string; limit: number };
const build = (d: Kysely<Db>, v: V) =>
  d
    .selectFrom('lines')
    .selectAll()
    .where('account_id', '=', v.accountId)
    .where('status', '=', indexed('bound'))
    .where(sql<boolean>`line_id = ${v.lineId} or seq > ${3}`)
    .orderBy('seq')
    .limit(v.limit);

describe('CompiledOnce: a query compiled once and run with new values', () => {
  it('gives the text and values Kysely compiles for each set of values, fixed values kept in place', () => {
    const once = new CompiledOnce(db, build);
    for (const v of [
      { accountId: 'acc_1', lineId: 'num_1', limit: 1 },
      { accountId: 'acc_2', lineId: 'num_9', limit: 50 },
    ]) {
      const direct = build(db, v).compile();
      const reused = once.compile(v);
      expect(reused.sql).to.equal(direct.sql);
      expect(reused.parameters).to.deep.equal(direct.parameters);
      expect(reused.parameters).to.deep.equal([v.accountId, v.lineId, 3, v.limit]);
    }
  });

  it('passes a list as one value, so lists of any length run the same text', () => {
    const build = (d: Kysely<Db>, v: { accountIds: readonly string[] }) =>
      d
        .selectFrom('lines')
        .selectAll()
        .where((eb) => eb('account_id', '=', eb.fn.any(eb.val(v.accountIds))));
    const once = new CompiledOnce(db, build);
    const texts = new Set<string>();
    for (const accountIds of [['acc_1'], ['acc_1', 'acc_2', 'acc_3'], []]) {
      const reused = once.compile({ accountIds });
      expect(reused.sql).to.equal(build(db, { accountIds }).compile().sql);
      expect(reused.parameters).to.deep.equal([accountIds]);
      texts.add(reused.sql);
    }
    expect([...texts]).to.have.length(1);
  });

  it('gives each run a query id of its own, so plugins never mix two runs up', () => {
    const once = new CompiledOnce(db, build);
    const a = once.compile({ accountId: 'a', lineId: 'b', limit: 1 });
    const b = once.compile({ accountId: 'a', lineId: 'b', limit: 1 });
    expect(a.queryId).to.not.equal(b.queryId);
  });

  it('refuses a build that writes a value into the text', () => {
    const once = new CompiledOnce(db, (d, v: { status: string }) =>
      d.selectFrom('lines').selectAll().where('status', '=', sql.lit(v.status)),
    );
    expect(() => once.compile({ status: 'bound' })).to.throw(/into its text/);
  });

  it('refuses a build that reads a value without passing it as one (a changed value would be lost)', () => {
    const derived = new CompiledOnce(db, (d, v: { lineId: string }) =>
      d.selectFrom('lines').selectAll().where('line_id', 'like', `${v.lineId}%`),
    );
    expect(() => derived.compile({ lineId: 'num' })).to.throw(/read slot lineId/);
    const branched = new CompiledOnce(db, (d, v: { status: string }) =>
      v.status === 'bound' ? d.selectFrom('lines').selectAll() : d.selectFrom('lines').select('seq'),
    );
    expect(() => branched.compile({ status: 'bound' })).to.throw(/read slot status/);
  });

  it("compiles for each schema a view names (a rebuild's), and shares the text between views of the same schema", () => {
    const once = new CompiledOnce<Db, V, unknown>(null, build);
    const v = { accountId: 'acc_1', lineId: 'num_1', limit: 5 };
    for (const view of [db, db.withSchema('rebuild_lines'), db.withSchema('other'), db.withSchema('rebuild_lines'), db]) {
      const direct = build(view, v).compile();
      const reused = once.compileOn(view, v);
      expect(reused.sql).to.equal(direct.sql);
      expect(reused.parameters).to.deep.equal(direct.parameters);
    }
    expect(once.compileOn(db.withSchema('rebuild_lines'), v).sql).to.contain('"rebuild_lines"."lines"');
    expect(once.compileOn(db, v).sql).to.not.contain('rebuild_lines');
    expect(() => once.compile(v)).to.throw(/compileOn/);
  });
});

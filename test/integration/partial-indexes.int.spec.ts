import { expect } from 'chai';
import { type CompiledQuery, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../infrastructure/db/database.js';
import { migrateToLatest } from '../../infrastructure/db/migrate.js';
import { KyselyChatappQueries } from '../../projections/chatapp/chatapp.queries.js';
import { KyselyNumberQueries } from '../../projections/numbers/number.queries.js';
import { KyselyRichQueries } from '../../projections/rich/rich.queries.js';
import type { ReadDb } from '../../projections/shared/read-db.js';

// Embedded statements are prepared (docs/event-store.md#prepared-statements). A look-up whose partial index is
// defined by a constant (`where status = 'active'`) names that constant as a literal, so the statement's generic
// plan, the one a prepared statement settles on, can use the index instead of being planned again on every run.

describe('look-ups by a partial index, as prepared statements (embedded)', function () {
  this.timeout(60_000);
  let h: DatabaseHandle;
  before(async function () {
    // EXPLAIN (GENERIC_PLAN) is PostgreSQL 16's; PGlite is 17
    if (process.env.DATABASE_URL || process.env.EVENTSTORE_URL) this.skip();
    h = await openDatabase({});
    await migrateToLatest(h.db as never);
  });
  after(() => h?.close());

  /** The statement a query method sends, captured instead of run. */
  async function statementOf(run: (db: Kysely<ReadDb>) => Promise<unknown>): Promise<CompiledQuery> {
    let captured: CompiledQuery | null = null;
    const capture = new Kysely<ReadDb>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => ({
          init: async () => undefined,
          acquireConnection: async () => ({
            executeQuery: async (q: CompiledQuery) => {
              captured ??= q;
              return { rows: [] };
            },
            // biome-ignore lint/correctness/useYield: never streamed here
            streamQuery: async function* () {
              throw new Error('not streamed');
            },
          }),
          beginTransaction: async () => undefined,
          commitTransaction: async () => undefined,
          rollbackTransaction: async () => undefined,
          releaseConnection: async () => undefined,
          destroy: async () => undefined,
        }),
        createQueryCompiler: () => new PostgresQueryCompiler(),
        createIntrospector: (db) => new PostgresIntrospector(db),
      },
    });
    await run(capture);
    if (!captured) throw new Error('the method sent no statement');
    return captured;
  }

  /** The generic plan of a statement: what a prepared statement runs once PostgreSQL stops planning it per run. */
  async function genericPlan(q: CompiledQuery): Promise<string> {
    const r = await sql<{ 'QUERY PLAN': string }>`explain (generic_plan) ${sql.raw(q.sql)}`.execute(h.db);
    return r.rows.map((row) => row['QUERY PLAN']).join('\n');
  }

  it("finds a number's holder by its E.164 through the index of active numbers", async () => {
    const q = await statementOf((db) => new KyselyNumberQueries(db).activeByPhoneNumber('+15550100'));
    expect(await genericPlan(q)).to.match(/phone_numbers_(active_e164|phone)_idx/);
  });

  it("finds a line's bound chat-app number through the index of bound numbers", async () => {
    const q = await statementOf((db) => new KyselyChatappQueries(db).boundLine('acc_1', 'num_1'));
    expect(await genericPlan(q)).to.match(/chatapp_numbers_(line|phone)_idx/);
  });

  it("lists an account's rich lines through the index of active lines", async () => {
    const q = await statementOf((db) => new KyselyRichQueries(db).lines('acc_1'));
    expect(await genericPlan(q)).to.include('rich_lines_account_idx');
  });
});

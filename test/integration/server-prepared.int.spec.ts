import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { type DatabaseHandle, openDatabase } from '../../infrastructure/db/database.js';
import { createTestTables, emptyTestTables, preparedStatementTests } from '../support/prepared-statements.js';

// Prepared statements on a PostgreSQL server (docs/event-store.md#prepared-statements), on a database of its own and
// one pooled connection, so that `pg_prepared_statements` (a session's own) shows what every statement left there.

const DATABASE_URL = process.env.DATABASE_URL;

describe('prepared statements on a PostgreSQL server', function () {
  this.timeout(60_000);
  const name = `prepared_${randomUUID().replaceAll('-', '')}`;
  let admin: pg.Client;
  let h: DatabaseHandle;
  before(async function () {
    if (!DATABASE_URL) this.skip();
    admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(DATABASE_URL);
    url.pathname = `/${name}`;
    h = await openDatabase({ databaseUrl: url.href, poolSize: 1 });
    await createTestTables(h.db as unknown as Kysely<any>);
  });
  beforeEach(() => emptyTestTables(h.db as unknown as Kysely<any>));
  after(async () => {
    await h?.close();
    await admin?.query(`drop database if exists ${name} with (force)`);
    await admin?.end();
  });

  preparedStatementTests(() => h);

  it('prepares nothing with DATABASE_PREPARED_STATEMENTS=false (behind a pooler that keeps no prepared statements)', async () => {
    const url = new URL(DATABASE_URL!);
    url.pathname = `/${name}`;
    const plain = await openDatabase({ databaseUrl: url.href, poolSize: 1, prepared: false });
    try {
      const bump = () =>
        (plain.db as unknown as Kysely<any>)
          .updateTable('counter')
          .set({ n: sql`n + ${1}` })
          .where('id', '=', 1)
          .compile();
      for (let i = 0; i < 3; i++) {
        await sql`select n from counter where id = ${1}`.execute(plain.db);
        await plain.pipeline([bump(), bump()]);
      }
      const held = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(plain.db);
      expect(held.rows[0]!.n).to.equal(0);
      const n = await sql<{ n: number }>`select n from counter where id = ${1}`.execute(plain.db);
      expect(n.rows[0]!.n).to.equal(6);
    } finally {
      await plain.close();
    }
  });

  it('runs a text seen once unnamed, and prepares it when it runs a second time', async () => {
    const held = async () =>
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from pg_prepared_statements where statement like ${'%once-or-twice probe%'}`.execute(h.db)
      ).rows[0]!.n;
    const run = () => sql`select id from counter where id = ${1} and 'once-or-twice probe' is not null`.execute(h.db);
    await run();
    expect(await held()).to.equal(0);
    await run();
    await run();
    expect(await held()).to.equal(1);
  });
});

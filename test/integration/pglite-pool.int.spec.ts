import { expect } from 'chai';
import { sql } from 'kysely';
import { migratedImage } from '../support/http.js';
import { lendPglite } from '../support/pglite-pool.js';

// The embedded test apps' pool of PGlites (test/support/pglite-pool.ts, docs/testing.md#running-the-tests): what one
// test app leaves behind never reaches the next.
const LEASE = { sql: 'insert into worker_leases (name, holder, expires_at) values ($1, $2, now())', parameters: ['late', 'gone'] };
const leases = async (h: Awaited<ReturnType<typeof lendPglite>>) =>
  (await sql<{ name: string }>`select name from worker_leases order by name`.execute(h.db)).rows.map((r) => r.name);

for (const thread of [false, true]) {
  describe(`the test apps' pool of PGlites (${thread ? 'on its own thread' : "in the process's thread"})`, function () {
    this.timeout(60_000);
    before(function () {
      // on a server the test apps open no PGlite
      if (process.env.DATABASE_URL) this.skip();
    });

    it('hands the next borrower empty tables, whatever the last one wrote or left open', async () => {
      const first = await lendPglite(thread, await migratedImage());
      await sql`insert into worker_leases (name, holder, expires_at) values ('kept', 'first', now())`.execute(first.db);
      // a transaction left open when its app closed: its row must not survive, nor hold the connection
      await sql`begin`.execute(first.db);
      await sql`insert into worker_leases (name, holder, expires_at) values ('open', 'first', now())`.execute(first.db);
      await first.close();
      const seen: string[][] = [];
      for (let i = 0; i < 4; i++) {
        const next = await lendPglite(thread, await migratedImage());
        seen.push(await leases(next));
        await sql`insert into worker_leases (name, holder, expires_at) values ('again', 'next', now())`.execute(next.db);
        await next.close();
      }
      expect(seen).to.deep.equal([[], [], [], []]);
    });

    it('refuses a statement from an app that has handed its database back', async () => {
      const gone = await lendPglite(thread, await migratedImage());
      await gone.close();
      // the pipeline reaches the runner directly, past the query builder its close ended
      const late = await gone.pipeline([LEASE]).then(
        () => null,
        (err: Error) => err.message,
      );
      expect(late).to.equal('this test app has closed its database');
      const next = await lendPglite(thread, await migratedImage());
      try {
        expect(await leases(next)).to.deep.equal([]);
      } finally {
        await next.close();
      }
    });
  });
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import { type Kysely, sql } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../infrastructure/db/database.js';
import { startTestApp } from '../support/http.js';
import { FAST_MESSAGING_ENV, inbound, messagingLine } from '../support/messaging.js';
import { eventually } from '../support/numbers.js';
import {
  createTestTables,
  emptyTestTables,
  preparedStatementTests,
  KINDS_ROW as ROW,
  KINDS_TABLE as TABLE,
} from '../support/prepared-statements.js';
import { startReceiver } from '../support/webhook-receiver.js';

// PGlite in the process's thread and on its own thread (docs/event-store.md#pglite-on-its-own-thread): the same
// driver, the same answers. The suite at large runs PGlite on its own thread, as the platform does; this file runs
// both, and `PGLITE_THREAD=false npm test` runs every suite in the process's thread.

const db = (h: DatabaseHandle) => h.db as unknown as Kysely<any>;
const nextTurn = () => new Promise<void>((r) => setImmediate(r));

for (const thread of [false, true]) {
  describe(`PGlite ${thread ? 'on its own thread' : "in the process's thread"}`, function () {
    this.timeout(60_000);
    let h: DatabaseHandle;
    before(async () => {
      h = await openDatabase({ thread });
      await createTestTables(db(h));
    });
    beforeEach(() => emptyTestTables(db(h)));
    after(async () => {
      await h.close();
    });

    it('answers rows with the types PGlite gives: dates, json, numbers, bytes, arrays, booleans, nulls', async () => {
      await db(h).insertInto('kinds').values(ROW).execute();
      const r = await db(h).selectFrom('kinds').selectAll().executeTakeFirstOrThrow();
      expect(r.at).to.be.instanceOf(Date);
      expect((r.at as Date).toISOString()).to.equal('2026-11-27T10:11:12.345Z');
      expect(r.doc).to.deep.equal({ a: 1, b: ['x', { c: null }], s: 'é "quoted"' });
      expect(Number(r.big)).to.equal(9_007_199_254);
      expect(String(r.amount)).to.equal('12.3400');
      expect([...(r.bytes as Uint8Array)]).to.deep.equal([0, 1, 2, 254, 255]);
      expect(r.tags).to.deep.equal(ROW.tags);
      expect(r.flag).to.equal(true);
      expect(r.ref).to.equal(ROW.ref);
      expect(r.note).to.equal(null);
    });

    if (thread)
      it('sends each statement to the thread as its own bytes, never the 8 KB pool buffer node wrote it in', async () => {
        // a view of node's shared buffer pool would cross whole (docs/event-store.md#pglite-on-its-own-thread)
        const crossed: [number, number][] = [];
        const original = Worker.prototype.postMessage;
        Worker.prototype.postMessage = function (this: Worker, ...args: Parameters<Worker['postMessage']>) {
          const bytes = (args[0] as { message?: Uint8Array }).message;
          if (bytes) crossed.push([bytes.byteLength, bytes.buffer.byteLength]);
          return original.apply(this, args);
        };
        try {
          await db(h).insertInto('kinds').values(ROW).execute();
          expect(await db(h).selectFrom('kinds').select('id').where('id', '=', 1).execute()).to.deep.equal([{ id: 1 }]);
        } finally {
          Worker.prototype.postMessage = original;
        }
        expect(crossed).to.have.length.above(1);
        for (const [length, buffer] of crossed) expect(buffer, `the bytes under a statement of ${length}`).to.equal(length);
      });

    it('counts the rows a statement changed, and runs a statement without parameters', async () => {
      await db(h).insertInto('kinds').values(ROW).execute();
      await db(h)
        .insertInto('kinds')
        .values({ ...ROW, id: 2 })
        .execute();
      const u = await db(h).updateTable('kinds').set({ note: 'seen' }).where('id', 'in', [1, 2, 3]).executeTakeFirst();
      expect(u.numUpdatedRows).to.equal(2n);
      const none = await db(h).deleteFrom('kinds').where('id', '=', 99).executeTakeFirst();
      expect(none.numDeletedRows).to.equal(0n);
      expect((await sql<{ n: number }>`select count(*)::int as n from kinds`.execute(h.db)).rows).to.deep.equal([{ n: 2 }]);
    });

    it("passes PostgreSQL's errors on with their code and constraint, and the connection goes on", async () => {
      await db(h).insertInto('kinds').values(ROW).execute();
      const err = await db(h)
        .insertInto('kinds')
        .values(ROW)
        .execute()
        .then(
          () => null,
          (e: unknown) => e as { code?: string; constraint?: string; message: string },
        );
      expect(err?.code).to.equal('23505');
      expect(err?.constraint).to.equal('kinds_pkey');
      expect(err?.message).to.match(/duplicate key/);
      expect((await sql<{ one: number }>`select 1 as one`.execute(h.db)).rows).to.deep.equal([{ one: 1 }]);
    });

    it('rolls a failed transaction back whole', async () => {
      const failed = await h.db
        .transaction()
        .execute(async (trx) => {
          await (trx as unknown as Kysely<any>).insertInto('kinds').values(ROW).execute();
          await (trx as unknown as Kysely<any>).insertInto('kinds').values(ROW).execute();
        })
        .then(
          () => false,
          () => true,
        );
      expect(failed).to.equal(true);
      expect(await db(h).selectFrom('kinds').selectAll().execute()).to.deep.equal([]);
    });

    it("lets no one else's statement into an open transaction: it runs after the commit", async () => {
      let inside!: () => void;
      const opened = new Promise<void>((r) => {
        inside = r;
      });
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      const tx = h.db.transaction().execute(async (trx) => {
        await (trx as unknown as Kysely<any>).insertInto('kinds').values(ROW).execute();
        inside();
        await held;
        await (trx as unknown as Kysely<any>).updateTable('kinds').set({ note: 'committed' }).where('id', '=', 1).execute();
      });
      await opened;
      const outside = db(h).selectFrom('kinds').select('note').execute();
      let answered = false;
      void outside.then(() => {
        answered = true;
      });
      for (let i = 0; i < 20; i++) await nextTurn();
      expect(answered, 'a statement from outside ran inside the open transaction').to.equal(false);
      release();
      await tx;
      expect(await outside).to.deep.equal([{ note: 'committed' }]);
    });

    it('runs transactions begun at the same moment one after the other (no lost update)', async () => {
      const N = 25;
      await Promise.all(
        Array.from({ length: N }, () =>
          h.db.transaction().execute(async (trx) => {
            const t = trx as unknown as Kysely<any>;
            const { n } = await t.selectFrom('counter').select('n').where('id', '=', 1).executeTakeFirstOrThrow();
            await nextTurn(); // another transaction would read the same n here if it got in
            await t
              .updateTable('counter')
              .set({ n: n + 1 })
              .where('id', '=', 1)
              .execute();
          }),
        ),
      );
      expect((await db(h).selectFrom('counter').select('n').executeTakeFirstOrThrow()).n).to.equal(N);
    });

    preparedStatementTests(() => h);

    it('dumps its data directory, and a database opened from the dump has the rows', async () => {
      await db(h).insertInto('kinds').values(ROW).execute();
      const image = await h.dump!();
      const copy = await openDatabase({ image, thread: !thread });
      try {
        const rows = await db(copy).selectFrom('kinds').select(['id', 'tags']).execute();
        expect(rows).to.deep.equal([{ id: 1, tags: ROW.tags }]);
        expect(await walInitZero(copy), 'opened from a dump').to.equal('off');
      } finally {
        await copy.close();
      }
    });

    it('makes a new WAL file without writing it full of zeros first, in memory and on a data directory (docs/event-store.md#wal-files)', async () => {
      expect(await walInitZero(h)).to.equal('off');
      const dir = mkdtempSync(join(tmpdir(), 'pglite-wal-'));
      const onDisk = await openDatabase({ dataDir: dir, thread });
      try {
        expect(await walInitZero(onDisk)).to.equal('off');
      } finally {
        await onDisk.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

const walInitZero = async (h: DatabaseHandle) =>
  (await sql<{ wal_init_zero: string }>`show wal_init_zero`.execute(h.db)).rows[0]?.wal_init_zero;

describe("PGlite's answers, once read", function () {
  this.timeout(60_000);

  // PGlite parses every answer it writes and keeps the messages until its next `execProtocol`; both runners go through
  // `runMessage`, which clears them (docs/event-store.md#pglite-on-its-own-thread). Measured here in the process's
  // thread, whose heap the test can see.
  it('are not kept: a thousand reads of fifty rows leave the heap where it was', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heap = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const h = await openDatabase({ thread: false });
    try {
      await sql`create table wide (id int primary key, body text not null)`.execute(h.db);
      await sql`insert into wide select g, repeat('x', 400) from generate_series(1, 50) g`.execute(h.db);
      const read = () => db(h).selectFrom('wide').selectAll().execute();
      expect(await read()).to.have.length(50);
      const before = heap();
      for (let i = 0; i < 1_000; i++) await read();
      // kept, the thousand answers' parsed rows would be over 20 MB
      expect((heap() - before) / 1e6, 'MB the heap grew').to.be.below(5);
    } finally {
      await h.close();
    }
  });
});

describe('PGlite on its own thread, on disk and in the runtime', function () {
  this.timeout(90_000);

  it('keeps its data in the directory across a close and a reopen, and refuses statements once closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pglite-thread-'));
    try {
      const first = await openDatabase({ dataDir: dir, thread: true });
      await TABLE.execute(first.db);
      await db(first).insertInto('kinds').values(ROW).execute();
      await first.close();
      const late = await sql`select 1`.execute(first.db).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(late?.message).to.match(/destroyed|ended|closed/i);
      const again = await openDatabase({ dataDir: dir, thread: true });
      try {
        expect(await db(again).selectFrom('kinds').select('id').execute()).to.deep.equal([{ id: 1 }]);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("takes an inbound text to the customer's webhook with PGLITE_THREAD=true", async () => {
    const app = await startTestApp({ ...FAST_MESSAGING_ENV, PGLITE_THREAD: 'true' });
    const rx = await startReceiver();
    try {
      const line = await messagingLine(app);
      const w = await app.call('POST', '/v1/webhooks', { key: line.key, body: { url: `${rx.url}/hook` } });
      expect(w.status, JSON.stringify(w.body)).to.equal(200);
      const r = await inbound(app, { from: '+13125550188', to: line.phoneNumber, body: 'open on the thread?' });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      const delivered = await eventually(
        async () =>
          rx.received.map((d) => JSON.parse(d.body)).find((b) => b.event === 'agent.message' && b.data.messageId === r.body.messageId),
        'the agent.message delivery',
      );
      expect(delivered.data).to.include({ message: 'open on the thread?', direction: 'inbound', from: '+13125550188' });
    } finally {
      await rx.close();
      await app.close();
    }
  });
});

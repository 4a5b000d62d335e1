import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { sql } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../infrastructure/db/database.js';
import { migrateToLatest } from '../../infrastructure/db/migrate.js';
import { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import { ev } from '../support/fixtures.js';

/**
 * Kills a projector process with SIGKILL in the middle of a batch (rows of the batch written, transaction
 * open, checkpoint not yet moved), starts a new one, and checks that every event was applied exactly once.
 * Uses the PostgreSQL server when DATABASE_URL is set, else a PGlite data directory on disk (which also
 * exercises PGlite's crash recovery and the stale data-directory lock).
 */
describe('projector killed mid-batch', function () {
  this.timeout(120_000);
  if (process.env.EVENTSTORE_URL) return; // the child reads the PostgreSQL events table

  let dataDir: string | undefined;
  const open = (): Promise<DatabaseHandle> => openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir });
  before(() => {
    if (!process.env.DATABASE_URL) dataDir = mkdtempSync(join(tmpdir(), 'kill-'));
  });
  after(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const child = (env: Record<string, string>) => {
    const p = spawn(process.execPath, ['--import', 'tsx', 'test/support/projector-child.ts'], {
      env: { ...process.env, ...env, ...(dataDir ? { KILL_DATA_DIR: dataDir } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    p.stderr.on('data', (b: Buffer) => {
      out += b.toString();
    });
    const waitFor = (marker: string) =>
      new Promise<void>((resolve, reject) => {
        const t = setInterval(() => {
          if (out.includes(marker)) {
            clearInterval(t);
            resolve();
          }
        }, 20);
        p.on('exit', (code) => {
          clearInterval(t);
          if (!out.includes(marker)) reject(new Error(`child exited ${code} before ${marker}:\n${out}`));
        });
      });
    return { p, waitFor };
  };

  it('applies every event exactly once after a SIGKILL between row writes and checkpoint', async () => {
    const type = `Killed${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    const total = 100;
    const h = await open();
    await migrateToLatest(h.db as never);
    const store = new PgEventStore(h.db, { now: () => new Date() });
    for (let i = 0; i < 4; i++)
      await store.appendToStream(
        `killed-${randomUUID()}`,
        Array.from({ length: 25 }, () => ev(type)),
        { expectedRevision: 'no_stream' },
      );
    await h.close(); // PGlite: the data directory has one owner at a time

    const first = child({ KILL_TYPE: type, KILL_TOTAL: String(total), STALL_AT: '40' });
    await first.waitFor('MID-BATCH');
    first.p.kill('SIGKILL');
    await new Promise((r) => first.p.on('exit', r));

    const second = child({ KILL_TYPE: type, KILL_TOTAL: String(total) });
    await second.waitFor('DONE');

    const check = await open();
    try {
      const rows = await sql<{ n: number }>`select n from kill_test_counts`.execute(check.db);
      expect(rows.rows).to.have.length(total);
      expect(
        rows.rows.every((r) => r.n === 1),
        'an event was applied twice',
      ).to.equal(true);
      const cp = await check.db
        .selectFrom('projection_checkpoints')
        .select('checkpoint')
        .where('name', '=', `kill_${type}`)
        .executeTakeFirstOrThrow();
      const ours = await new PgEventStore(check.db, { now: () => new Date() }).readAll({ filter: { eventTypes: [type] }, maxCount: 1000 });
      expect(cp.checkpoint).to.equal(ours.at(-1)!.checkpoint);
      await sql`drop table kill_test_counts`.execute(check.db);
    } finally {
      await check.close();
    }
  });
});

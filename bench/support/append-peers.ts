/**
 * Single-event appends on one PostgreSQL server, side by side in one run (docs/testing.md#event-store): the bare
 * floor (a one-row INSERT, each its own transaction: what any durable append must at least pay), Emmett's
 * PostgreSQL event store, and this project's store. Each runs `writers` writers, one stream each, for a fixed
 * time, in a scratch database of its own.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql';
import pg from 'pg';
import type { ClockPort } from '../../application/ports/clock.port.js';
import { openDatabase } from '../../infrastructure/db/database.js';
import { migrateToLatest } from '../../infrastructure/db/migrate.js';
import { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import { benchMetadata } from './bench.js';
import { withScratchDatabase } from './scratch-db.js';

export type PeerRow = Readonly<{ writers: number; system: string; appends: number; seconds: number; perSecond: number }>;

const clock: ClockPort = { now: () => new Date() };
const metadata = benchMetadata();
const data = (i: number) => ({ callId: `call_${i}`, from: '+14155550100', to: '+14155550199', durationS: i % 600 });

/** Runs `writers` loops of `step` until `seconds` have passed; answers the steps done and the time taken. */
async function forDuration(writers: number, seconds: number, step: (writer: number, i: number) => Promise<void>) {
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  const counts = await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      let i = 0;
      while (performance.now() < until) await step(w, i++);
      return i;
    }),
  );
  return { appends: counts.reduce((a, b) => a + b, 0), seconds: (performance.now() - t0) / 1000 };
}

const row = (writers: number, system: string, r: { appends: number; seconds: number }): PeerRow => ({
  writers,
  system,
  ...r,
  perSecond: r.appends / r.seconds,
});

/** The floor from node: the same driver as the stores, a one-row INSERT per transaction. */
async function floorNode(url: string, writers: number, seconds: number): Promise<PeerRow> {
  return withScratchDatabase(url, async (scoped) => {
    const pool = new pg.Pool({ connectionString: scoped, max: writers });
    pool.on('error', () => undefined); // the scratch database is dropped with its connections
    try {
      await pool.query('create table floor_t (id bigint generated always as identity primary key, v text not null)');
      const r = await forDuration(writers, seconds, async (w, i) => {
        await pool.query('insert into floor_t (v) values ($1)', [`${w}:${i}`]);
      });
      return row(writers, 'floor: INSERT + COMMIT (node pg)', r);
    } finally {
      await pool.end();
    }
  });
}

/** pgbench from the server's binaries, when installed: the floor without any client-side cost. */
export function findPgbench(): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(join(dir, 'pgbench'))) return join(dir, 'pgbench');
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  for (const v of readdirSync(root).sort().reverse())
    if (existsSync(join(root, v, 'bin', 'pgbench'))) return join(root, v, 'bin', 'pgbench');
  return null;
}

async function floorPgbench(bin: string, url: string, writers: number, seconds: number): Promise<PeerRow> {
  return withScratchDatabase(url, async (scoped) => {
    const setup = new pg.Client({ connectionString: scoped });
    await setup.connect();
    await setup.query('create table floor_t (id bigint generated always as identity primary key, v text not null)');
    await setup.end();
    const script = join(tmpdir(), `floor-${randomUUID()}.sql`);
    writeFileSync(script, "insert into floor_t (v) values ('x');\n");
    const { stdout } = await promisify(execFile)(bin, [
      '-n',
      '-c',
      String(writers),
      '-j',
      String(writers),
      '-T',
      String(seconds),
      '-f',
      script,
      scoped,
    ]);
    const tx = Number(/number of transactions actually processed: (\d+)/.exec(stdout)?.[1]);
    const tps = Number(/tps = ([\d.]+)/.exec(stdout)?.[1]);
    if (!(tx > 0 && tps > 0)) throw new Error(`pgbench printed no figures:\n${stdout}`);
    return { writers, system: 'floor: INSERT + COMMIT (pgbench)', appends: tx, seconds: tx / tps, perSecond: tps };
  });
}

async function emmett(url: string, writers: number, seconds: number): Promise<PeerRow> {
  // Emmett's close() leaves a pooled connection open; dropping the scratch database ends it, and its pool,
  // which has no 'error' listener we can reach, reports that as an uncaught error: expected here, so ignored
  const dropped = (err: Error & { code?: string }) => {
    if (err.code !== '57P01') throw err;
  };
  process.on('uncaughtException', dropped);
  try {
    return await emmettIn(url, writers, seconds);
  } finally {
    await new Promise((r) => setTimeout(r, 200));
    process.off('uncaughtException', dropped);
  }
}

async function emmettIn(url: string, writers: number, seconds: number): Promise<PeerRow> {
  return withScratchDatabase(url, async (scoped) => {
    const store = getPostgreSQLEventStore(scoped);
    try {
      const run = randomUUID().slice(0, 8);
      await store.appendToStream(`warmup-${run}`, [{ type: 'CallEnded', data: data(0) }]); // creates its schema
      const versions = new Map<number, bigint>();
      const r = await forDuration(writers, seconds, async (w, i) => {
        const stream = `call-${run}${w}`;
        const expected = versions.get(w);
        const res = await store.appendToStream(
          stream,
          [{ type: 'CallEnded', data: data(i) }],
          expected === undefined ? {} : { expectedStreamVersion: expected },
        );
        versions.set(w, res.nextExpectedStreamVersion);
      });
      return row(writers, "Emmett's PostgreSQL event store 0.42", r);
    } finally {
      await store.close();
    }
  });
}

/** This project's store as the platform makes it on a server (EVENT_APPEND_CONCURRENCY's default, 4). */
async function ours(url: string, writers: number, seconds: number): Promise<PeerRow> {
  return withScratchDatabase(url, async (scoped) => {
    const handle = await openDatabase({ databaseUrl: scoped, poolSize: writers });
    // as the platform makes it (infrastructure/platform/module.ts): appends of one turn of the event loop go together
    const store = new PgEventStore(handle.db, clock, { gatherAppends: true });
    try {
      await migrateToLatest(handle.db as never);
      const run = randomUUID().slice(0, 8);
      const r = await forDuration(writers, seconds, async (w, i) => {
        await store.appendToStream(`call-${run}${w}`, [{ id: randomUUID(), type: 'CallEnded', data: data(i), metadata }], {
          expectedRevision: i === 0 ? 'no_stream' : BigInt(i - 1),
        });
      });
      return row(writers, 'this project (PgEventStore)', r);
    } finally {
      await store.close();
      await handle.close();
    }
  });
}

/** Every system at 1 and at 8 writers; the floor by pgbench when it is installed, and from node always. */
export async function appendPeers(url: string, seconds: number): Promise<PeerRow[]> {
  const pgbench = findPgbench();
  const rows: PeerRow[] = [];
  for (const writers of [1, 8]) {
    const measured = [
      ...(pgbench ? [() => floorPgbench(pgbench, url, writers, seconds)] : []),
      () => floorNode(url, writers, seconds),
      () => emmett(url, writers, seconds),
      () => ours(url, writers, seconds),
    ];
    for (const m of measured) {
      const r = await m();
      process.stderr.write(`  ${r.writers} writers, ${r.system}: ${Math.round(r.perSecond)}/s\n`);
      rows.push(r);
    }
  }
  return rows;
}

export function printPeers(rows: readonly PeerRow[]): void {
  console.log('single-event appends, one stream per writer, same server, same run:');
  console.log('writers | system                                 |  appends |   per s | ours / this');
  for (const writers of [...new Set(rows.map((r) => r.writers))]) {
    const group = rows.filter((r) => r.writers === writers);
    const mine = group.find((r) => r.system.startsWith('this project'));
    for (const r of group) {
      const ratio = mine && r !== mine ? `${(mine.perSecond / r.perSecond).toFixed(2)}x` : '';
      console.log(
        `${String(writers).padStart(7)} | ${r.system.padEnd(38)} | ${String(r.appends).padStart(8)} | ${Math.round(r.perSecond).toLocaleString('en-US').padStart(7)} | ${ratio}`,
      );
    }
  }
}

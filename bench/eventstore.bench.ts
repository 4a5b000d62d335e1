/**
 * Throughput of the PostgreSQL event-store adapter (`npm run bench:eventstore`).
 *
 * On PGlite in memory, and also on a server when DATABASE_URL is set. On the server everything happens in
 * a scratch database (`bench_<random>`, created next to DATABASE_URL's and dropped at the end), so the
 * bench never touches existing tables; the role needs CREATEDB.
 *
 * Scenarios: appends to one stream, sequential, each with the exact expected revision (batches of 1 and
 * of 10); appends to 8 streams at once (each stream sequential, the streams concurrent); catch-up over all
 * events from START, by paging readAll and by a subscription. BENCH_SCALE (default 1) scales every size.
 *
 * Then, per target, three long-history figures (BENCH_LONG=0 skips them): loading an account of 100,000 events from
 * the start and from its snapshot, loading a number's day of 20,000 counted sends from the start, and rebuilding the
 * webhook delivery log over 200,000 events with its memory.
 *
 * With a server, it then measures single-event appends at 1 and 8 writers beside their peers in the same run:
 * the bare INSERT + COMMIT floor (pgbench when installed, and from node) and Emmett's PostgreSQL event store
 * (bench/support/append-peers.ts; BENCH_PEER_SECONDS per row, default 5; BENCH_PEERS=0 skips them).
 */

import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { ClockPort } from '../application/ports/clock.port.js';
import { type NewEvent, START } from '../application/ports/event-store.port.js';
import { type DatabaseHandle, openDatabase } from '../infrastructure/db/database.js';
import { migrateToLatest } from '../infrastructure/db/migrate.js';
import { PgEventStore } from '../infrastructure/event-store/pg-event-store.js';
import { appendPeers, printPeers } from './support/append-peers.js';
import { benchMetadata, runBench } from './support/bench.js';
import { durability, serverVersion } from './support/database-facts.js';
import { loadBusyDay, loadLongAggregate, printBusyDay, printLoad, printRebuild, rebuildLongLog } from './support/rebuild-and-load.js';
import { targetsLine, withScratchDatabase } from './support/scratch-db.js';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
if (!(SCALE > 0)) throw new Error(`BENCH_SCALE must be a positive number, got ${process.env.BENCH_SCALE}`);
const n = (base: number) => Math.max(1, Math.round(base * SCALE));

const SIZES = {
  warmup: n(50),
  single1: n(1500), // appends of 1 event
  single10: n(300), // appends of 10 events
  streams: 8,
  concurrent: { 1: n(200), 10: n(50), 100: n(25) }, // appends per stream, by batch size
  readPage: 1000,
  subscriptionBatch: 500,
  poolSize: 16,
} as const;

const clock: ClockPort = { now: () => new Date() };
const metadata = benchMetadata();
/** A realistically sized event (~300 bytes of JSON with its metadata). */
const callEvent = (i: number): NewEvent => ({
  id: randomUUID(),
  type: 'CallEnded',
  data: {
    callId: `call_${i}`,
    from: '+14155550100',
    to: '+14155550199',
    durationS: i % 600,
    endedBy: 'caller',
    hangupCause: 'normal_clearing',
  },
  metadata,
});
const batch = (size: number, from: number) => Array.from({ length: size }, (_, i) => callEvent(from + i));

type Result = { target: string; scenario: string; events: number; calls: number; ms: number; latencies?: number[] };

async function appendSequentially(store: PgEventStore, stream: string, appends: number, size: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < appends; i++) {
    const events = batch(size, i * size);
    const t = performance.now();
    await store.appendToStream(stream, events, { expectedRevision: i === 0 ? 'no_stream' : BigInt(i * size - 1) });
    latencies.push(performance.now() - t);
  }
  return latencies;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
}

async function benchTarget(target: string, handle: DatabaseHandle): Promise<Result[]> {
  const store = new PgEventStore(handle.db, clock, { pollIntervalMs: 20 });
  const results: Result[] = [];
  const run = randomUUID().slice(0, 8);
  try {
    await appendSequentially(store, `bench_warmup-${run}`, SIZES.warmup, 1);

    for (const size of [1, 10] as const) {
      const appends = size === 1 ? SIZES.single1 : SIZES.single10;
      const { ms, value } = await timed(() => appendSequentially(store, `bench_single${size}-${run}`, appends, size));
      results.push({ target, scenario: `append, 1 stream, batch ${size}`, events: appends * size, calls: appends, ms, latencies: value });
    }

    for (const size of [1, 10, 100] as const) {
      const appends = SIZES.concurrent[size];
      const { ms, value } = await timed(() =>
        Promise.all(
          Array.from({ length: SIZES.streams }, (_, s) => appendSequentially(store, `bench_multi${size}-${run}${s}`, appends, size)),
        ),
      );
      results.push({
        target,
        scenario: `append, ${SIZES.streams} streams concurrently, batch ${size}`,
        events: SIZES.streams * appends * size,
        calls: SIZES.streams * appends,
        ms,
        latencies: value.flat(),
      });
    }

    const read = await timed(async () => {
      let after = START;
      let count = 0;
      let pages = 0;
      for (;;) {
        const page = await store.readAll({ after, maxCount: SIZES.readPage });
        count += page.length;
        pages++;
        if (page.length < SIZES.readPage) return { count, pages };
        after = page[page.length - 1]!.checkpoint;
      }
    });
    results.push({
      target,
      scenario: `catch-up: readAll pages of ${SIZES.readPage} from START`,
      events: read.value.count,
      calls: read.value.pages,
      ms: read.ms,
    });

    const sub = await timed(async () => {
      let count = 0;
      let batches = 0;
      const s = store.subscribe({ after: START, batchSize: SIZES.subscriptionBatch }, async (b) => {
        count += b.length;
        batches++;
      });
      await s.caughtUp;
      await s.stop();
      return { count, batches };
    });
    if (sub.value.count !== read.value.count) throw new Error(`subscription saw ${sub.value.count} events, readAll ${read.value.count}`);
    results.push({
      target,
      scenario: `catch-up: subscription from START, batches of ${SIZES.subscriptionBatch}`,
      events: sub.value.count,
      calls: sub.value.batches,
      ms: sub.ms,
    });
  } finally {
    await store.close();
  }
  return results;
}

/** The settings that decide what a commit costs, printed with the results. */
const COMMIT_SETTINGS = ['fsync', 'synchronous_commit', 'full_page_writes'];
const notes: string[] = [];
/** figures printed after the table: the long aggregate, the busy day and the rebuild, per target */
const extra: (() => void)[] = [];
const LONG_AGGREGATE = n(100_000);
const BUSY_DAY = n(20_000);
const REBUILD_DELIVERIES = n(50_000); // four events each

async function longFigures(target: string, handle: DatabaseHandle): Promise<void> {
  if (process.env.BENCH_LONG === '0') return;
  const store = new PgEventStore(handle.db, clock, { pollIntervalMs: 1000 });
  try {
    const load = await loadLongAggregate(store, handle, LONG_AGGREGATE);
    const busyDay = await loadBusyDay(store, BUSY_DAY);
    const rebuild = await rebuildLongLog(store, handle.db as never, REBUILD_DELIVERIES);
    extra.push(
      () => printLoad(target, load),
      () => printBusyDay(target, busyDay),
      () => printRebuild(target, rebuild),
    );
  } finally {
    await store.close();
  }
}

async function onPglite(): Promise<Result[]> {
  const handle = await openDatabase({});
  try {
    await migrateToLatest(handle.db as never);
    const target = `pglite ${await serverVersion(handle.db)} (memory)`;
    notes.push(`${target}: one connection, so "concurrent" appends are serialised; ${await durability(handle.db, COMMIT_SETTINGS)}`);
    const results = await benchTarget(target, handle);
    await longFigures(target, handle);
    return results;
  } finally {
    await handle.close();
  }
}

async function onServer(url: string): Promise<Result[]> {
  return withScratchDatabase(url, async (scoped) => {
    const handle = await openDatabase({ databaseUrl: scoped, poolSize: SIZES.poolSize });
    try {
      await migrateToLatest(handle.db as never);
      const target = `postgres ${await serverVersion(handle.db)} (server, pool ${SIZES.poolSize})`;
      notes.push(`${target}: ${new URL(scoped).host}, ${await durability(handle.db, COMMIT_SETTINGS)}`);
      const results = await benchTarget(target, handle);
      await longFigures(target, handle);
      return results;
    } finally {
      await handle.close();
    }
  });
}

const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};

function printTable(results: readonly Result[]): void {
  const header = ['target', 'scenario', 'events', 'time s', 'events/s', 'calls/s', 'p50 ms', 'p99 ms'];
  const rows = results.map((r) => [
    r.target,
    r.scenario,
    String(r.events),
    (r.ms / 1000).toFixed(2),
    Math.round(r.events / (r.ms / 1000)).toLocaleString('en-US'),
    Math.round(r.calls / (r.ms / 1000)).toLocaleString('en-US'),
    r.latencies ? percentile(r.latencies, 50).toFixed(2) : '-',
    r.latencies ? percentile(r.latencies, 99).toFixed(2) : '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const right = (i: number) => i >= 2;
  const line = (cells: readonly string[]) => cells.map((c, i) => (right(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-+-'));
  let previous = '';
  for (const r of rows) {
    if (previous && r[0] !== previous) console.log(widths.map((w) => '-'.repeat(w)).join('-+-'));
    previous = r[0]!;
    console.log(line(r));
  }
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  console.log(`event store bench: node ${process.version}, scale ${SCALE}; ${targetsLine(url)}`);
  console.log('calls/s = appends/s for append rows, pages or handler batches/s for catch-up rows; p50/p99 = latency of one append');
  const started = performance.now();
  const results = [...(await onPglite()), ...(url ? await onServer(url) : [])];
  console.log('');
  printTable(results);
  console.log('');
  for (const note of notes) console.log(note);
  console.log('');
  for (const print of extra) print();
  if (url && process.env.BENCH_PEERS !== '0') {
    console.log('');
    printPeers(await appendPeers(url, Number(process.env.BENCH_PEER_SECONDS ?? 5)));
  }
  console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

runBench(main);

/**
 * Webhook delivery throughput and latency (`npm run bench:webhooks`).
 *
 * A local receiver (node:http on 127.0.0.1) answers 200 to every delivery. The bench appends mapped domain
 * events (`AgentCreated`) for an account whose master webhook is that receiver, and measures, per event, the
 * time from the append's commit to the receiver answering 200 to its delivery (matched by `X-Webhook-ID`).
 * The whole path runs: dispatch reactor -> delivery stream -> timeline projector -> claim -> signed POST ->
 * outcome event. Two loads per scenario:
 *  - burst: BENCH_EVENTS events as fast as eight appenders can go; deliveries per second from the first
 *    append to the last 200, and the latency under that backlog;
 *  - paced: BENCH_PACED events at BENCH_PACED_RATE per second; the latency of a lightly loaded system.
 *
 * Scenarios:
 *  - one process on PGlite (embedded, in memory): projectors, reactors and the delivery worker in this process;
 *  - with DATABASE_URL (a PostgreSQL server; the role needs CREATEDB): one and then two worker processes
 *    (`ROLE=worker`, the same binary as `npm start`), each in a scratch database created and dropped here;
 *    this process only appends events and runs the receiver.
 * Each load waits at most BENCH_SCENARIO_SECONDS (default 15) after its last append and reports what arrived by then.
 * BENCH_WORKER_NODE_ARGS adds node flags to the worker processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to
 * profile them (docs/testing.md#webhooks).
 *
 * With DATABASE_URL it also measures, on the same server and receiver, the floor: a bare job-queue loop (INSERT the
 * jobs, SELECT … FOR UPDATE SKIP LOCKED, POST, UPDATE; bench/support/job-queue-floor.ts) with one and two workers,
 * and prints the burst figures as ratios of it.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { EventMetadata, EventStorePort, NewEvent } from '../application/ports/event-store.port.js';
import { AGENT_DEFAULTS } from '../domain/agent/agent.js';
import { deliveryIdFor } from '../domain/webhook/webhook.js';
import { webhookDeliveryStream } from '../domain/webhook/webhook-delivery.decider.js';
import { ACCOUNTS } from '../infrastructure/accounts/tokens.js';
import { loadConfig } from '../infrastructure/config/config.js';
import { openDatabase } from '../infrastructure/db/database.js';
import { migrateToLatest } from '../infrastructure/db/migrate.js';
import { createLogger } from '../infrastructure/logger.js';
import { PLATFORM } from '../infrastructure/platform/tokens.js';
import { createRuntime, type Runtime } from '../infrastructure/runtime.js';
import { startArgs } from '../infrastructure/start-args.js';
import { WEBHOOKS } from '../infrastructure/webhooks/tokens.js';
import type { ReadDb } from '../projections/shared/read-db.js';
import { type CpuCost, type CpuReading, cpuNow, cpuPerOperation, cpuText } from './support/cpu.js';
import { jobQueueFloor } from './support/job-queue-floor.js';
import { withScratchDatabase } from './support/scratch-db.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 500);
const PACED = Number(process.env.BENCH_PACED ?? 80);
const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 20);
const SCENARIO_MS = Number(process.env.BENCH_SCENARIO_SECONDS ?? 15) * 1000;
const APPENDERS = 8;
const now = () => performance.timeOrigin + performance.now();
/** every process of one deployment opens the webhook secrets with the same key (docs/security.md) */
const SECRETS_KEY = randomBytes(32).toString('hex'); // wall-clock ms with sub-ms resolution, comparable across processes

type Result = {
  scenario: string;
  load: string;
  delivered: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** append committed -> delivery scheduled (the dispatch reactor's hop), p50 / p99 ms */
  dispatch: [number, number];
  /** delivery scheduled -> receiver answered 200 (timeline projector, claim, signed POST), p50 / p99 ms */
  send: [number, number];
  notes: string;
  /** CPU a delivery while the load ran: this process (appenders, receiver), the workers, PostgreSQL on this machine */
  cpu: CpuCost;
};

/** Answers 200 to everything and notes when each X-Webhook-ID was answered. */
async function startReceiver(): Promise<{ url: string; answered: Map<string, number>; close: () => Promise<void> }> {
  const answered = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok', () => {
        const id = String(req.headers['x-webhook-id'] ?? '');
        if (!answered.has(id)) answered.set(id, now());
      });
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    answered,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function setUpAccount(rt: Runtime, url: string): Promise<string> {
  const ctx = { accountId: 'system', requestId: null, correlationId: 'bench', actor: 'system:bench' };
  const { accountId } = await rt.get(ACCOUNTS.Commands).open(ctx, { name: 'Bench' });
  // AgentCreated becomes agent.created, a lifecycle event that webhooks receive only when they list it
  await rt.get(WEBHOOKS.Commands).configureMaster({ ...ctx, accountId }, { url, events: ['agent.created'] });
  return accountId;
}

type Load = { name: string; events: number; appenders: number; perSecond: number | null };
const loads: Load[] = [
  { name: `burst ${EVENTS}`, events: EVENTS, appenders: APPENDERS, perSecond: null },
  { name: `paced ${PACED_RATE}/s`, events: PACED, appenders: 1, perSecond: PACED_RATE },
];

/** Appends the load's AgentCreated events and waits for their deliveries to be answered. */
async function run(
  scenario: string,
  load: Load,
  store: EventStorePort,
  db: Kysely<ReadDb>,
  accountId: string,
  rx: Awaited<ReturnType<typeof startReceiver>>,
  notes: string,
  /** the CPU meters of this load's processes (the workers', and PostgreSQL's for a server) */
  meter: () => CpuReading,
): Promise<Result> {
  rx.answered.clear();
  const EVENTS = load.events;
  const appendedAt = new Map<string, number>();
  const metadata: EventMetadata = { accountId, correlationId: randomUUID(), causationId: null, requestId: null, actor: 'system:bench' };
  let next = 0;
  const cpu = meter();
  const t0 = now();
  await Promise.all(
    Array.from({ length: load.appenders }, async () => {
      while (next < EVENTS) {
        const i = next++;
        if (load.perSecond) {
          const wait = t0 + (i * 1000) / load.perSecond - now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        const agentId = `agt_bench${i}_${randomUUID().slice(0, 8)}`;
        const e: NewEvent = {
          id: randomUUID(),
          type: 'AgentCreated',
          metadata,
          data: {
            agentId,
            accountId,
            config: { ...AGENT_DEFAULTS, name: `Bench ${i}`, voice: 'sandbox-aria' },
            createdAt: new Date().toISOString(),
          },
        };
        await store.appendToStream(`agent-${agentId}`, [e], { expectedRevision: 'no_stream' });
        appendedAt.set(deliveryIdFor(e.id), now());
      }
    }),
  );
  // counted from the last append: a paced load may take longer than the wait itself
  const deadline = now() + SCENARIO_MS;
  while (rx.answered.size < EVENTS && now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const spent = cpuPerOperation(cpu, meter(), rx.answered.size);
  const latencies: number[] = [];
  let last = t0;
  for (const [id, at] of rx.answered) {
    const sent = appendedAt.get(id);
    if (sent === undefined) continue;
    latencies.push(at - sent);
    last = Math.max(last, at);
  }
  const seconds = (last - t0) / 1000;
  const { dispatch, send } = await hops(store, rx.answered, appendedAt);
  return {
    scenario,
    load: load.name,
    delivered: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    dispatch,
    send,
    cpu: spent,
    notes:
      latencies.length < EVENTS
        ? `${notes}; only ${latencies.length}/${EVENTS} within ${SCENARIO_MS / 1000} s of the last append (the others: ${await whereAreThey(
            db,
            [...appendedAt.keys()].filter((id) => !rx.answered.has(id)),
          )})`
        : notes,
  };
}

/**
 * Splits each answered delivery's latency at the moment its WebhookDeliveryScheduled was appended (the event's
 * createdAt, taken just before that append on the same machine's clock): where the time goes.
 */
async function hops(
  store: EventStorePort,
  answered: ReadonlyMap<string, number>,
  appendedAt: ReadonlyMap<string, number>,
): Promise<{ dispatch: [number, number]; send: [number, number] }> {
  const dispatch: number[] = [];
  const send: number[] = [];
  const ids = [...answered.keys()].filter((id) => appendedAt.has(id));
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const read = await store.readStreams(chunk.map((id) => webhookDeliveryStream(id)));
    for (const id of chunk) {
      const scheduled = read.get(webhookDeliveryStream(id))?.[0];
      if (!scheduled) continue;
      const at = Date.parse(scheduled.createdAt);
      dispatch.push(at - appendedAt.get(id)!);
      send.push(answered.get(id)! - at);
    }
  }
  return { dispatch: [percentile(dispatch, 50), percentile(dispatch, 99)], send: [percentile(send, 50), percentile(send, 99)] };
}

/** What the delivery log says of deliveries that did not arrive: their status and the last attempt's error, counted. */
async function whereAreThey(db: Kysely<ReadDb>, ids: readonly string[]): Promise<string> {
  const seen = new Map<string, number>();
  let found = 0;
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('webhook_deliveries')
      .select(['status', 'attempt_count', 'error_message'])
      .where('delivery_id', 'in', ids.slice(i, i + 500))
      .execute();
    found += rows.length;
    for (const r of rows) {
      const k = `${r.status} after ${r.attempt_count} attempt(s)${r.error_message ? `: ${r.error_message.slice(0, 80)}` : ''}`;
      seen.set(k, (seen.get(k) ?? 0) + 1);
    }
  }
  const parts = [...seen].map(([k, n]) => `${n} ${k}`);
  if (found < ids.length) parts.push(`${ids.length - found} not in the delivery log yet`);
  return parts.join('; ');
}

const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};

async function onPglite(rx: Awaited<ReturnType<typeof startReceiver>>): Promise<Result[]> {
  const cfg = loadConfig({
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    DEV_ACCOUNT: 'false',
    ROLE: 'all',
    SECRETS_KEY,
    EVENT_BATCH_LINGER_MS: process.env.EVENT_BATCH_LINGER_MS,
    WEBHOOK_CONCURRENCY: process.env.WEBHOOK_CONCURRENCY,
  });
  const rt = await createRuntime(cfg, createLogger('silent'));
  try {
    const accountId = await setUpAccount(rt, rx.url);
    const out: Result[] = [];
    for (const load of loads)
      out.push(
        await run(
          '1 process, PGlite (embedded)',
          load,
          rt.store,
          rt.get(PLATFORM.ReadDb),
          accountId,
          rx,
          `WEBHOOK_CONCURRENCY ${cfg.WEBHOOK_CONCURRENCY}, EVENT_BATCH_LINGER_MS ${cfg.EVENT_BATCH_LINGER_MS ?? 4}`,
          // embedded: this process only, whatever server may run idle beside it
          () => cpuNow({ postgres: false }),
        ),
      );
    return out;
  } finally {
    await rt.close();
  }
}

function spawnWorker(databaseUrl: string): Promise<ChildProcess> {
  const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, ...startArgs()], {
    env: { ...process.env, ROLE: 'worker', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', DEV_ACCOUNT: 'false', SECRETS_KEY },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
    child.stdout!.on('data', (b: Buffer) => {
      if (b.toString().includes('worker running')) resolve(child);
    });
  });
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.removeAllListeners('exit');
  await new Promise<void>((r) => {
    child.once('exit', () => r());
    child.kill('SIGTERM');
  });
}

async function onServer(url: string, workers: number, rx: Awaited<ReturnType<typeof startReceiver>>): Promise<Result[]> {
  return withScratchDatabase(url, async (scoped) => {
    const h = await openDatabase({ databaseUrl: scoped, poolSize: 1 });
    await migrateToLatest(h.db as never);
    await h.close();
    const children = await Promise.all(Array.from({ length: workers }, () => spawnWorker(scoped)));
    // this process serves no deliveries: ROLE=api runs neither projectors nor workers
    const cfg = loadConfig({
      DATABASE_URL: scoped,
      LOG_LEVEL: 'silent',
      DEV_ACCOUNT: 'false',
      ROLE: 'api',
      DATABASE_POOL_SIZE: '16',
      SECRETS_KEY,
      EVENT_BATCH_LINGER_MS: process.env.EVENT_BATCH_LINGER_MS,
      WEBHOOK_CONCURRENCY: process.env.WEBHOOK_CONCURRENCY,
    });
    const rt = await createRuntime(cfg, createLogger('silent'));
    try {
      const accountId = await setUpAccount(rt, rx.url);
      const out: Result[] = [];
      for (const load of loads) {
        out.push(
          await run(
            `${workers} worker process${workers > 1 ? 'es' : ''}, PostgreSQL server`,
            load,
            rt.store,
            rt.get(PLATFORM.ReadDb),
            accountId,
            rx,
            `WEBHOOK_CONCURRENCY ${cfg.WEBHOOK_CONCURRENCY} each, EVENT_BATCH_LINGER_MS ${cfg.EVENT_BATCH_LINGER_MS ?? 0}`,
            () => cpuNow({ postgres: true, workerPids: children.flatMap((c) => (c.pid === undefined ? [] : [c.pid])) }),
          ),
        );
      }
      return out;
    } finally {
      await rt.close();
      await Promise.all(children.map(stopWorker));
    }
  });
}

function print(results: readonly Result[]): void {
  const header = [
    'scenario',
    'load',
    'delivered',
    'time s',
    'deliveries/s',
    'p50 ms',
    'p99 ms',
    'dispatch p50/p99',
    'send p50/p99',
    'CPU ms a delivery',
    'notes',
  ];
  const pair = ([a, b]: [number, number]) => `${a.toFixed(0)}/${b.toFixed(0)}`;
  const rows = results.map((r) => [
    r.scenario,
    r.load,
    String(r.delivered),
    r.seconds.toFixed(2),
    r.perSecond.toFixed(0),
    r.p50.toFixed(1),
    r.p99.toFixed(1),
    pair(r.dispatch),
    pair(r.send),
    cpuText(r.cpu),
    r.notes,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i <= 1 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  process.stdout.write(`${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${rows.map(line).join('\n')}\n`);
}

async function main(): Promise<void> {
  process.stdout.write(
    `webhook delivery bench: a burst of ${EVENTS} events (${APPENDERS} appenders), then ${PACED} events at ${PACED_RATE}/s; local receiver answering 200\n`,
  );
  process.stdout.write('latency = append committed -> receiver answered 200 (dispatch, schedule, claim, signed POST)\n');
  process.stdout.write(
    'dispatch = append committed -> WebhookDeliveryScheduled appended; send = that -> receiver answered 200 (projector, claim, POST)\n\n',
  );
  const rx = await startReceiver();
  const results: Result[] = [];
  const floors = new Map<number, Awaited<ReturnType<typeof jobQueueFloor>>>();
  try {
    if (process.env.BENCH_SKIP_EMBEDDED !== '1') results.push(...(await onPglite(rx)));
    const url = process.env.DATABASE_URL;
    if (url) {
      for (const workers of [1, 2]) floors.set(workers, await jobQueueFloor(url, rx.url, EVENTS, workers));
      results.push(...(await onServer(url, 1, rx)));
      results.push(...(await onServer(url, 2, rx)));
    }
  } finally {
    await rx.close();
  }
  print(results);
  if (floors.size > 0) {
    process.stdout.write(
      `\nfloor on the same server and receiver: a bare job queue (SELECT … FOR UPDATE SKIP LOCKED, POST, UPDATE), ${EVENTS} jobs\n`,
    );
    for (const [workers, { perSecond, cpu }] of floors) {
      const ours = results.find((r) => r.scenario.startsWith(`${workers} worker`) && r.load.startsWith('burst'));
      const ratio = ours
        ? ` | ours ${ours.perSecond.toFixed(0)}/s = ${(ours.perSecond / perSecond).toFixed(2)}x the floor, ` +
          `at ${cpuText(ours.cpu)} CPU a delivery = ${(ours.cpu.total / cpu.total).toFixed(1)}x the floor's`
        : '';
      process.stdout.write(
        `  ${workers} worker${workers > 1 ? 's' : ''}: ${perSecond.toFixed(0)} jobs/s at ${cpuText(cpu)} CPU a job${ratio}\n`,
      );
    }
    process.stdout.write(
      "  (CPU: this process's (the appenders, the receiver; the floor's loops), the worker processes' and PostgreSQL's on this machine;\n" +
        `  all of this machine's ${availableParallelism()} cores allow at most cores × 1000 / (ms a delivery) per second: docs/testing.md#what-the-cpu-allows)\n`,
    );
  }
  if (!process.env.DATABASE_URL) {
    process.stdout.write(
      '\nThe one- and two-worker-process figures need a PostgreSQL server: set DATABASE_URL (the role needs CREATEDB).\n',
    );
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);

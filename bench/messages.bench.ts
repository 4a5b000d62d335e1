/**
 * Text messaging throughput and latency (`npm run bench:messages`), over the public HTTP API.
 *
 * The real runtime (`createRuntime`, as `npm start` builds it, ROLE=all: API, projectors, reactors and workers
 * in this one process) listens on 127.0.0.1, and the bench is its client. Setup goes through the API as an
 * operator and a client would: an account and credit (admin API), its daily caps raised (`PATCH
 * /admin/accounts/{id}/messaging`, docs/messaging.md#settings), an agent, BENCH_NUMBERS Canadian numbers (a
 * Canadian number needs no 10DLC registration, README.md) and a master webhook to a local receiver answering
 * 200 (sandbox mode allows loopback, docs/webhooks.md#configuration). The per-number send rate, the endpoint
 * throttle and the sandbox carrier's rate are raised through the configuration (MESSAGE_SEND_RATE_PER_SECOND,
 * MESSAGE_SEND_BURST, THROTTLE_MAX_REQUESTS, SANDBOX_SMS_RATE_PER_MINUTE), and the sandbox carrier answers at
 * once, so the figures are the pipeline's, not the caps'. Per target, in order:
 *  1. the append floor: BENCH_FLOOR single-event appends to one stream, sequential, each with the exact expected
 *     revision, through the project's PostgreSQL event store adapter on the runtime's database: an instance of
 *     its own (the floor), then the runtime's own store (whose every append wakes the runtime's subscriptions);
 *  2. accepted sends: `POST /v1/messages` from the numbers in turn, each to a recipient never messaged before
 *     (a new conversation, counted by the daily caps), BENCH_CONCURRENCY in flight, after BENCH_WARMUP_SENDS
 *     uncounted ones (and their tail) and one uncounted round; BENCH_SENDS of them or BENCH_SEND_SECONDS, whichever ends first; 201s per second, their latency, and
 *     every other status counted;
 *  3. inbound latency: BENCH_INBOUND texts at each rate of BENCH_INBOUND_RATES (per second), injected through
 *     the sandbox carrier's callback (`POST /sandbox/inbound`, docs/sandbox.md) from a pool of 50 senders; the
 *     time from the inject request being sent to the receiver answering 200 to that text's `agent.message`
 *     (matched by the text's body). Each load waits at most BENCH_SCENARIO_SECONDS after its last inject's answer.
 *     Then a burst: BENCH_INBOUND_BURST texts as fast as the injects go (64 in flight): deliveries per second.
 * Between 2 and 3 the bench waits for the sends' asynchronous tail (submissions, receipts) to settle, and prints the
 * sends' rate and CPU with their tail: until the last receipt was recorded (work a tree leaves for after the sends'
 * window is counted there).
 *
 * Targets: PGlite in memory, and with DATABASE_URL also that server, in a scratch database created and dropped
 * here (the role needs CREATEDB). BENCH_SCALE (default 1) scales the default counts. Figures are printed,
 * never asserted.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { EventStorePort, NewEvent } from '../application/ports/event-store.port.js';
import { PgEventStore } from '../infrastructure/event-store/pg-event-store.js';
import { createLogger } from '../infrastructure/logger.js';
import { costMetrics } from '../infrastructure/observability/metrics.js';
import { createRuntime, listen, type Runtime } from '../infrastructure/runtime.js';
import { benchConfig, benchMetadata, runBench, UNCAPPED_TEXTS } from './support/bench.js';
import { type CpuCost, type CpuReading, cpuNow, cpuPerOperation, cpuText } from './support/cpu.js';
import { durability, serverVersion } from './support/database-facts.js';
import { type Call, client, type Reply } from './support/http-client.js';
import { runOnTargets, targetsLine } from './support/scratch-db.js';

const positive = (name: string, def: number): number => {
  const raw = process.env[name];
  const v = raw === undefined || raw === '' ? def : Number(raw);
  if (!(v > 0) || !Number.isFinite(v)) throw new Error(`${name} must be a positive number, got ${raw}`);
  return v;
};
const SCALE = positive('BENCH_SCALE', 1);
const n = (base: number) => Math.max(1, Math.round(base * SCALE));
const SENDS = Math.round(positive('BENCH_SENDS', n(1000)));
const SEND_MS = positive('BENCH_SEND_SECONDS', 10) * 1000;
const CONCURRENCY = Math.round(positive('BENCH_CONCURRENCY', 16));
const NUMBERS = Math.min(20, Math.round(positive('BENCH_NUMBERS', 4)));
const INBOUND = Math.round(positive('BENCH_INBOUND', n(60)));
const INBOUND_RATES = (process.env.BENCH_INBOUND_RATES || '20,100').split(',').map((r) => {
  const v = Number(r);
  if (!(v > 0)) throw new Error(`BENCH_INBOUND_RATES must list positive rates, got ${process.env.BENCH_INBOUND_RATES}`);
  return v;
});
const FLOOR = Math.round(positive('BENCH_FLOOR', n(200)));
const WARMUP_SENDS = Math.round(positive('BENCH_WARMUP_SENDS', n(1000)));
const BURST = Math.round(positive('BENCH_INBOUND_BURST', n(500)));
const SCENARIO_MS = positive('BENCH_SCENARIO_SECONDS', 15) * 1000;
const SENDERS = 50; // inbound senders, so conversations have some history
const MAX_INJECTS_IN_FLIGHT = 64;
const SETTLE_QUIET_MS = 1500;
const SETTLE_MAX_MS = 60_000;
const ADMIN_TOKEN = randomBytes(24).toString('hex');

const now = () => performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};
const countsText = (m: ReadonlyMap<string, number>) =>
  [...m]
    .sort()
    .map(([k, v]) => `${k}×${v}`)
    .join(', ');

type Result = {
  target: string;
  scenario: string;
  unit: string;
  count: number;
  seconds: number;
  p50: number;
  p99: number;
  notes: string;
  /** CPU per operation while it ran (docs/testing.md#what-the-cpu-allows) */
  cpu?: CpuCost;
  /** sends: their rate and CPU until the last of their receipts was recorded */
  withReceipts?: { rate: number; cpu: CpuCost };
};

/** A request that got no answer: status 0, the error's code as the body. */
const failed = (err: unknown): Reply => ({ status: 0, body: (err as { code?: string }).code ?? String(err) });
const statusOf = (r: Reply): string =>
  r.status === 0
    ? `error ${r.body}`
    : r.status >= 400
      ? `${r.status} ${r.body?.error?.code ?? r.body?.detail ?? ''}`.trim()
      : String(r.status);

const ok = (what: string, r: Reply): any => {
  if (r.status < 200 || r.status > 299) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

// ---------------------------------------------------------------- webhook receiver

type Receiver = { url: string; answered: Map<string, number>; repeats: () => number; close: () => Promise<void> };

/** Answers 200 to every delivery and notes when the `agent.message` of each bench text was answered, by its body. */
async function startReceiver(): Promise<Receiver> {
  const answered = new Map<string, number>();
  let repeats = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok', () => {
        const at = now();
        try {
          const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event?: string; data?: { message?: string } };
          const text = event.event === 'agent.message' ? event.data?.message : undefined;
          if (text && answered.has(text)) repeats++;
          else if (text) answered.set(text, at);
        } catch {
          /* not a bench delivery */
        }
      });
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    answered,
    repeats: () => repeats,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// ---------------------------------------------------------------- setup, as a client would

type Line = { key: string; agentId: string; numbers: { id: string; phoneNumber: string }[] };

async function setUp(call: Call, rx: Receiver): Promise<Line> {
  const admin = ADMIN_TOKEN;
  const acc = ok(
    'create account',
    await call('POST', '/admin/accounts', { key: admin, body: { name: 'Messages bench', numberLimit: Math.max(10, NUMBERS) } }),
  ) as { accountId: string; apiKey: string };
  ok('credit', await call('POST', `/admin/accounts/${acc.accountId}/credit`, { key: admin, body: { amountMicros: 100_000_000 } }));
  // the daily caps would stop a number after 100 new conversations (docs/messaging.md#caps)
  ok(
    'messaging settings',
    await call('PATCH', `/admin/accounts/${acc.accountId}/messaging`, {
      key: admin,
      body: { dailyNewConversationLimit: 1_000_000, dailyOutboundLimit: 1_000_000 },
    }),
  );
  const key = acc.apiKey;
  const agent = ok('agent', await call('POST', '/v1/agents', { key, body: { name: 'Bench texter' } })) as { id: string };
  const numbers: Line['numbers'] = [];
  for (let i = 0; i < NUMBERS; i++) {
    const num = ok('number', await call('POST', '/v1/numbers', { key, body: { country: 'CA', agentId: agent.id } })) as {
      id: string;
      phoneNumber: string;
    };
    numbers.push({ id: num.id, phoneNumber: num.phoneNumber });
  }
  ok('webhook', await call('POST', '/v1/webhooks', { key, body: { url: rx.url } }));
  return { key, agentId: agent.id, numbers };
}

/**
 * The i-th recipient: +1 312 NXX XXXX outside the sandbox's 555 exchange (no magic numbers), last digit 0-4
 * (a mobile by the sandbox's lookup rules, docs/sandbox.md#lookup-rules), all distinct.
 */
const recipient = (i: number): string => {
  const exchange = 200 + Math.floor(i / 5000);
  const line = Math.floor((i % 5000) / 5) * 10 + (i % 5);
  return `+1312${exchange >= 555 ? exchange + 1 : exchange}${String(line).padStart(4, '0')}`;
};
/** One of SENDERS phones texting in: +1 416 2XX 1XXX. */
const sender = (i: number): string => `+1416${200 + (i % SENDERS)}${1000 + (i % SENDERS)}`;

// ---------------------------------------------------------------- scenarios

/**
 * Single-event appends to one stream, sequential, each with the exact expected revision, through the project's
 * event store adapter on the runtime's database (an event type nothing handles). `bare`: an adapter instance of
 * its own, whose appends wake none of the runtime's subscriptions (they see them at their next poll); otherwise
 * the runtime's own store, whose every append wakes each of its subscriptions.
 */
async function appendFloor(target: string, rt: Runtime, bare: boolean): Promise<Result> {
  const store: EventStorePort = bare ? new PgEventStore(rt.database.db, { now: () => new Date() }) : rt.store;
  const metadata = benchMetadata();
  const event = (i: number): NewEvent => ({
    id: randomUUID(),
    type: 'BenchAppended',
    data: { i, from: '+12045550100', to: '+13125550188', note: 'an event of about the size of a text message event' },
    metadata,
  });
  const stream = `bench_floor-${randomUUID().slice(0, 8)}`;
  const warmup = 50;
  const latencies: number[] = [];
  let t0 = now();
  for (let i = 0; i < warmup + FLOOR; i++) {
    if (i === warmup) t0 = now();
    const t = now();
    await store.appendToStream(stream, [event(i)], { expectedRevision: i === 0 ? 'no_stream' : BigInt(i - 1) });
    if (i >= warmup) latencies.push(now() - t);
  }
  const seconds = (now() - t0) / 1000;
  if (bare) await store.close();
  return {
    target,
    scenario: bare ? 'append floor: 1 stream, 1 event per append' : "same, through the runtime's own store",
    unit: 'events',
    count: FLOOR,
    seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    notes: bare
      ? 'an adapter instance of its own on the same database, runtime idle'
      : `each append wakes the runtime's ${subscriptionsOf(rt)} subscriptions (projectors and reactors), which read the log`,
  };
}

const subscriptionsOf = (rt: Runtime) =>
  rt.engine.projectors.length + [...rt.workers.keys()].filter((k) => k.startsWith('reactor:')).length;

/** The i-th send: from the numbers in turn, to the i-th recipient. */
const sendTo = (call: Call, line: Line, i: number): Promise<Reply> =>
  call('POST', '/v1/messages', {
    key: line.key,
    body: {
      number_id: line.numbers[i % line.numbers.length]!.id,
      to_number: recipient(i),
      body: `Bench message ${i}: your order is ready for pickup.`,
    },
  }).catch(failed);

/**
 * BENCH_WARMUP_SENDS sends before the measured ones, to the first recipients, uncounted: a fresh process compiles
 * the code the sends make hot, on threads that take the cores the sends run on
 * (docs/testing.md#messages-npm-run-benchmessages). Answers how many were accepted, and at what rate.
 */
async function warmUp(call: Call, line: Line): Promise<{ accepted: number; rate: number }> {
  let next = 0;
  let accepted = 0;
  const t0 = now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < WARMUP_SENDS) if ((await sendTo(call, line, next++)).status === 201) accepted++;
    }),
  );
  return { accepted, rate: accepted / ((now() - t0) / 1000) };
}

/** The measured sends, to recipients from `first` on (after the warm-up's). */
async function sends(target: string, call: Call, line: Line, first: number): Promise<Result> {
  let next = first;
  const send = (i: number) => sendTo(call, line, i);
  // warm-up, not counted: the first requests of a fresh process pay for compilation
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < first + CONCURRENCY) await send(next++);
    }),
  );
  const statuses = new Map<string, number>();
  const latencies: number[] = [];
  const doneAt: number[] = [];
  const cpu = meter(target);
  const t0 = now();
  const stopAt = t0 + SEND_MS;
  let started = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (started < SENDS && now() < stopAt) {
        started++;
        const i = next++;
        const t = now();
        const r = await send(i);
        const at = now();
        const code = statusOf(r);
        statuses.set(code, (statuses.get(code) ?? 0) + 1);
        if (r.status === 201) {
          latencies.push(at - t);
          doneAt.push(at);
        }
      }
    }),
  );
  const seconds = (now() - t0) / 1000;
  // the rate over each half of the run: each number's daily counter stream grows with every send it counts
  const mid = t0 + (seconds * 1000) / 2;
  const halves = [doneAt.filter((at) => at < mid).length, doneAt.filter((at) => at >= mid).length].map((c) =>
    (c / (seconds / 2)).toFixed(0),
  );
  return withCpu(
    {
      target,
      scenario: `POST /v1/messages, ${CONCURRENCY} in flight, ${line.numbers.length} numbers`,
      unit: '201s',
      count: latencies.length,
      seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      notes: [
        countsText(statuses),
        `201/s in the first half ${halves[0]}, the second ${halves[1]}`,
        started < SENDS ? `stopped at ${SEND_MS / 1000} s` : '',
      ]
        .filter(Boolean)
        .join('; '),
    },
    cpu,
    'send',
  );
}

/** Statements sent so far through the query builder (`db_statements_total`, docs/operations.md#what-an-operation-costs). */
async function statementsSoFar(): Promise<number> {
  return (await costMetrics.statements.get()).values.reduce((sum, v) => sum + v.value, 0);
}

/**
 * Messages sent so far to the embedded database, each a statement or a pipelined batch (`db_embedded_messages_total`,
 * docs/event-store.md#pglite-on-its-own-thread); none on a server.
 */
async function messagesSoFar(): Promise<number> {
  return (await costMetrics.embeddedMessages.get()).values.reduce((sum, v) => sum + v.value, 0);
}

/**
 * Counts from now: the answer, given how many operations were made since, is `S statements (and M messages to the
 * embedded database)` per operation, the idle work of the same time included.
 */
async function countsFromNow(): Promise<(operations: number) => Promise<string>> {
  const [statements, messages] = [await statementsSoFar(), await messagesSoFar()];
  return async (operations) => {
    const m = (await messagesSoFar()) - messages;
    const ms = m > 0 ? ` and ${(m / operations).toFixed(1)} messages to the embedded database` : '';
    return `${(((await statementsSoFar()) - statements) / operations).toFixed(1)} statements${ms}`;
  };
}

/** Waits until the event store's head has not moved for SETTLE_QUIET_MS (the sends' submissions and receipts). */
async function settle(store: EventStorePort): Promise<number> {
  const t0 = now();
  let head = await store.headCheckpoint();
  let since = now();
  while (now() - since < SETTLE_QUIET_MS && now() - t0 < SETTLE_MAX_MS) {
    await sleep(100);
    const h = await store.headCheckpoint();
    if (h !== head) {
      head = h;
      since = now();
    }
  }
  return (now() - t0 - SETTLE_QUIET_MS) / 1000;
}

/** `rate` texts a second, or with `burst` set that many texts as fast as MAX_INJECTS_IN_FLIGHT injects go. */
async function inbound(target: string, call: Call, line: Line, rx: Receiver, rate: number, burst?: number): Promise<Result> {
  const texts = burst ?? INBOUND;
  const run = randomUUID().slice(0, 6);
  const text = (i: number) => `Bench inbound ${run}-${i}: are you open tonight?`;
  const sentAt = new Map<string, number>();
  const injectLatencies: number[] = [];
  const statuses = new Map<string, number>();
  const accepted = new Set<string>();
  let inFlight = 0;
  let late = 0;
  const pending: Promise<void>[] = [];
  const repeatsBefore = rx.repeats();
  const t0 = now();
  for (let i = 0; i < texts; i++) {
    const wait = burst ? 0 : t0 + (i * 1000) / rate - now();
    if (wait > 0) await sleep(wait);
    while (inFlight >= MAX_INJECTS_IN_FLIGHT) await sleep(1);
    if (!burst && now() - (t0 + (i * 1000) / rate) > 50) late++;
    const body = text(i);
    const to = line.numbers[i % line.numbers.length]!.phoneNumber;
    inFlight++;
    const t = now();
    sentAt.set(body, t);
    pending.push(
      call('POST', '/sandbox/inbound', { key: ADMIN_TOKEN, body: { from: sender(i), to, body } })
        .catch(failed)
        .then((r) => {
          inFlight--;
          injectLatencies.push(now() - t);
          const code = statusOf(r);
          statuses.set(code, (statuses.get(code) ?? 0) + 1);
          if (r.status === 201) accepted.add(body);
        }),
    );
  }
  await Promise.all(pending);
  const deadline = now() + SCENARIO_MS;
  const delivered = () => [...accepted].filter((k) => rx.answered.has(k)).length;
  while (delivered() < accepted.size && now() < deadline) await sleep(10);
  const latencies: number[] = [];
  let last = t0;
  for (const [body, sent] of sentAt) {
    const at = rx.answered.get(body);
    if (at === undefined) continue;
    latencies.push(at - sent);
    last = Math.max(last, at);
  }
  const missing = accepted.size - latencies.length;
  const repeats = rx.repeats() - repeatsBefore;
  return {
    target,
    scenario: burst ? `inbound burst of ${burst} -> agent.message answered 200` : `inbound ${rate}/s -> agent.message answered 200`,
    unit: 'deliveries',
    count: latencies.length,
    seconds: (last - t0) / 1000,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    notes: [
      `inject ${countsText(statuses)}, inject p50 ${percentile(injectLatencies, 50).toFixed(1)} ms`,
      missing > 0 ? `${missing} accepted, not delivered ${SCENARIO_MS / 1000} s after the last inject's answer` : '',
      late > 0 ? `${late} injects started >50 ms behind schedule` : '',
      repeats > 0 ? `${repeats} deliveries repeated` : '',
    ]
      .filter(Boolean)
      .join('; '),
  };
}

/** Whether a target is a PostgreSQL server (its processes' CPU counts, when they run on this machine). */
const onServer = (target: string) => !target.startsWith('pglite');

/** The CPU meters for a target. */
const meter = (target: string) => cpuNow({ postgres: onServer(target) });

/** Adds to a result the CPU its operations cost from `from` on, to its notes and for the goals. */
function withCpu(r: Result, from: CpuReading, what: string): Result {
  r.cpu = cpuPerOperation(from, meter(r.target), r.count);
  r.notes += `; CPU a ${what}: ${cpuText(r.cpu)}`;
  return r;
}

// ---------------------------------------------------------------- targets

async function onTarget(target: string, env: Record<string, string>, rx: Receiver, notes: string[]): Promise<Result[]> {
  const cfg = benchConfig(ADMIN_TOKEN, {
    ...UNCAPPED_TEXTS,
    ...env,
  });
  const rt: Runtime = await createRuntime(cfg, createLogger('silent'));
  const server = await listen(rt.app, 0, '127.0.0.1');
  const { call, fresh, close, resets } = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    notes.push(
      `${target}: PostgreSQL ${await serverVersion(rt.database.db)} (${await durability(rt.database.db)}), ` +
        `DATABASE_POOL_SIZE ${cfg.DATABASE_URL ? cfg.DATABASE_POOL_SIZE : '1 (PGlite)'}, ` +
        `WEBHOOK_CONCURRENCY ${cfg.WEBHOOK_CONCURRENCY}, EVENT_POLL_INTERVAL_MS ${cfg.EVENT_POLL_INTERVAL_MS}`,
    );
    const line = await setUp(call, rx);
    const out: Result[] = [];
    out.push(await appendFloor(target, rt, true));
    out.push(await appendFloor(target, rt, false));
    fresh();
    const warm = await warmUp(call, line);
    const warmTail = await settle(rt.store);
    notes.push(
      `${target}: before the sends, ${warm.accepted} of ${WARMUP_SENDS} uncounted ones accepted at ${Math.round(warm.rate)}/s, ` +
        `their tail settled ${warmTail.toFixed(1)} s after the last`,
    );
    fresh();
    const perSend = await countsFromNow();
    const whole = meter(target);
    const sent = await sends(target, call, line, WARMUP_SENDS);
    out.push(sent);
    const tail = await settle(rt.store);
    // the sends with their tail: until the last receipt was recorded, and the CPU of all of it (the quiet wait's
    // idle work included), so that work a tree leaves for after the sends' window is counted
    const withTail = cpuPerOperation(whole, meter(target), sent.count + CONCURRENCY);
    // what became of the accepted sends (the read model), so a fast 201 that then failed would show
    const outcome = await sql<{ status: string | null; n: string }>`
      select status, count(*) as n from messages where direction = 'outbound' group by status order by status`.execute(rt.database.db);
    sent.notes += `; then ${outcome.rows.map((r) => `${r.status}×${r.n}`).join(', ')} (warm-up included)`;
    sent.notes += `; ${await perSend(sent.count + CONCURRENCY)} per send with its receipts (idle work included)`;
    sent.withReceipts = { rate: sent.count / (sent.seconds + tail), cpu: withTail };
    sent.notes += `; with their receipts ${Math.round(sent.withReceipts.rate)}/s (the tail settled ${tail.toFixed(1)} s after the last 201), CPU a send with its receipts ${cpuText(withTail)}`;
    for (const rate of INBOUND_RATES) {
      fresh();
      const cpu = meter(target);
      const perText = await countsFromNow();
      const paced = withCpu(await inbound(target, call, line, rx, rate), cpu, 'text');
      paced.notes += `; ${await perText(INBOUND)} per text (idle work included)`;
      out.push(paced);
    }
    fresh();
    const perBurstText = await countsFromNow();
    const burstCpu = meter(target);
    const burst = withCpu(await inbound(target, call, line, rx, 0, BURST), burstCpu, 'text');
    burst.notes += `; ${await perBurstText(BURST)} per text (idle work included)`;
    out.push(burst);
    if (resets() > 0) notes.push(`${target}: ${resets()} requests sent again after the server had closed their kept-alive connection`);
    return out;
  } finally {
    close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await rt.close();
  }
}

function print(results: readonly Result[]): void {
  const header = ['target', 'scenario', 'count', 'time s', 'per s', 'p50 ms', 'p99 ms', 'notes'];
  const rows = results.map((r) => [
    r.target,
    r.scenario,
    `${r.count} ${r.unit}`,
    r.seconds.toFixed(2),
    Math.round(r.count / r.seconds).toLocaleString('en-US'),
    r.p50.toFixed(1),
    r.p99.toFixed(1),
    r.notes,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const right = (i: number) => i >= 2 && i <= 6;
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (right(i) ? c.padStart(widths[i]!) : i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join(' | ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('-+-');
  console.log(line(header));
  console.log(rule);
  let previous = '';
  for (const r of rows) {
    if (previous && r[0] !== previous) console.log(rule);
    previous = r[0]!;
    console.log(line(r));
  }
}

/**
 * The throughput issue's goals for texts (docs/testing.md#the-goals-and-where-each-stands), each measured figure
 * beside its goal and as a ratio of it (above 1: met).
 */
function goals(results: readonly Result[]): void {
  const find = (target: string, scenario: (s: string) => boolean) => results.find((r) => r.target === target && scenario(r.scenario));
  const rate = (r: Result | undefined) => (r ? r.count / r.seconds : NaN);
  const rows: string[] = [];
  const row = (target: string, figure: string, measured: string, goal: string, ratio: number) =>
    `${target.padEnd(17)} | ${figure.padEnd(44)} | ${measured.padStart(6)} | ${goal.padEnd(6)} | ${ratio.toFixed(2)}×`;
  for (const target of [...new Set(results.map((r) => r.target))]) {
    const embedded = !onServer(target);
    const sent = find(target, (s) => s.startsWith('POST /v1/messages'));
    const sends = rate(sent);
    const sendGoal = embedded ? 300 : 1000;
    rows.push(row(target, 'sends per second', sends.toFixed(0), `≥ ${sendGoal}`, sends / sendGoal));
    if (sent?.cpu) rows.push(ceiling(target, 'send', sent.cpu, sendGoal));
    // accepted faster than their receipts are recorded is not a rate a platform keeps up: both are held to the goal
    const kept = sent?.withReceipts;
    if (kept) {
      rows.push(row(target, 'sends with their receipts, per second', kept.rate.toFixed(0), `≥ ${sendGoal}`, kept.rate / sendGoal));
      rows.push(ceiling(target, 'send with receipts', kept.cpu, sendGoal));
    }
    if (!embedded) continue;
    const burstResult = find(target, (s) => s.startsWith('inbound burst'));
    const burst = rate(burstResult);
    rows.push(row(target, 'inbound burst, deliveries per second', burst.toFixed(0), '≥ 400', burst / 400));
    if (burstResult?.cpu) rows.push(ceiling(target, 'text', burstResult.cpu, 400));
    const paced = find(target, (s) => s.startsWith('inbound 100/s'));
    if (paced) rows.push(row(target, 'inbound at 100/s, p99 ms', paced.p99.toFixed(0), '≤ 25', 25 / paced.p99));
  }
  console.log('\ngoals, this run (a ratio of 1 or more meets the goal):');
  for (const r of rows) console.log(`  ${r}`);
  console.log(
    "  (ceiling: the rate the CPU measured per operation allows on all of this machine's cores, this process and a\n" +
      '  PostgreSQL server on this machine together, if nothing else ran; a goal above its ceiling needs cheaper operations)',
  );
}

/** The rate a goal needs beside the rate the measured CPU per operation allows on this machine's cores. */
function ceiling(target: string, what: string, cpu: CpuCost, goal: number): string {
  return (
    `${target.padEnd(17)} | ${`ceiling at ${cpu.total.toFixed(2)} ms CPU a ${what}`.padEnd(44)} | ${cpu.ceiling.toFixed(0).padStart(6)} | ` +
    `${`≥ ${goal}`.padEnd(6)} | ${(cpu.ceiling / goal).toFixed(2)}× (${cpu.cores} cores; the goal needs ≤ ${((cpu.cores * 1000) / goal).toFixed(2)} ms)`
  );
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  console.log(
    `messages bench: node ${process.version}; ${SENDS} sends or ${SEND_MS / 1000} s (${CONCURRENCY} in flight, ${NUMBERS} numbers), ` +
      `${INBOUND} inbound texts at ${INBOUND_RATES.join(', ')}/s, floor ${FLOOR} appends; ${targetsLine(url)}`,
  );
  console.log('sends: 201s per second and request latency; inbound: inject request sent -> receiver answered 200 to its agent.message');
  const started = now();
  const rx = await startReceiver();
  await runOnTargets(url, rx, onTarget, (results) => {
    print(results);
    goals(results);
  });
  console.log('one process serves the API, runs the projectors, reactors and workers, and runs this client and the receiver');
  console.log(`\ntotal ${((now() - started) / 1000).toFixed(1)} s`);
}

runBench(main);

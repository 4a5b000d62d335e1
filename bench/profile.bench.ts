/**
 * What one operation costs (`npm run bench:profile`, docs/testing.md#profile-npm-run-benchprofile): per inbound
 * text, send, webhook delivery and voice turn, the appends, statements, subscription wake-ups and milliseconds of
 * CPU it takes, counted by the platform's own counters (`/metrics`, docs/operations.md#what-an-operation-costs).
 *
 * The real runtime (ROLE=all, sandbox providers, as the other benches start it) listens on 127.0.0.1 and the bench
 * is its client. Each operation runs PROFILE_OPS times, one at a time: it starts, its visible end is awaited (the
 * receiver's 200, the send's 201, the reply spoken), and then its tail (receipts, projections, the
 * webhook's outcome) until nothing has been appended nor read by a subscription for QUIET_MS. The counters are read
 * before and after the whole run of one operation; the idle cost over the same time (lease renewals, the
 * subscriptions' polls, measured for IDLE_MS before each operation) is taken off, and the rest divided by the
 * operations. A voice turn is the difference between calls of 1 + PROFILE_TURNS turns and calls of 1 turn. The idle
 * windows together are also printed per second: what the platform costs when nothing is asked of it.
 *
 * CPU is this process's (the platform, and embedded its database; also the bench's own HTTP client and
 * receiver, a small share); on a server on this machine, the PostgreSQL processes' CPU is read from /proc as well.
 * Figures are printed, never asserted.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { PGlite } from '@electric-sql/pglite';
import type { NewEvent } from '../application/ports/event-store.port.js';
import { AGENT_DEFAULTS } from '../domain/agent/agent.js';
import { createLogger } from '../infrastructure/logger.js';
import { costMetrics } from '../infrastructure/observability/metrics.js';
import { createRuntime, listen, type Runtime } from '../infrastructure/runtime.js';
import { benchConfig, benchMetadata, runBench, UNCAPPED_TEXTS } from './support/bench.js';
import { postgresCpuMs } from './support/cpu.js';
import { type Call, client, type Reply } from './support/http-client.js';
import { onEachTarget, targetsLine } from './support/scratch-db.js';

const int = (name: string, def: number): number => {
  const raw = process.env[name];
  const v = raw === undefined || raw === '' ? def : Number(raw);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return v;
};
const OPS = int('PROFILE_OPS', 20);
const TURNS = int('PROFILE_TURNS', 5);
const QUIET_MS = int('PROFILE_QUIET_MS', 400);
const IDLE_MS = int('PROFILE_IDLE_MS', 3000);
const DONE_MS = 20_000;
/** PROFILE_STATEMENTS=N: also print each operation's N costliest statement shapes, per operation: count, ms, rows (embedded only) */
const STATEMENTS = Number(process.env.PROFILE_STATEMENTS ?? 0);
const ADMIN_TOKEN = randomBytes(24).toString('hex');

const now = () => performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ok = (what: string, r: Reply): any => {
  if (r.status < 200 || r.status > 299) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

// ---------------------------------------------------------------- counters

/** What the counters and the process add up, at one moment or over a stretch. */
type Totals = {
  cpuMs: number;
  pgCpuMs: number;
  appendStatements: number;
  appends: number;
  events: number;
  statements: number;
  byVerb: Map<string, number>;
  dbMs: number;
};

type Counts = Totals & { at: number; reads: Map<string, { events: number; empty: number }> };

/** A counter's values added up (over its labels). */
const sum = async (c: { get(): Promise<{ values: { value: number }[] }> }) => (await c.get()).values.reduce((n, v) => n + v.value, 0);

/**
 * The counters and the CPU now. `server`: also the CPU of the PostgreSQL server's processes, read from every process's
 * `/proc` entry (a few milliseconds of this thread each time), so only where a server is the target.
 */
async function counts(server: boolean): Promise<Counts> {
  const byVerb = new Map<string, number>();
  for (const v of (await costMetrics.statements.get()).values) byVerb.set(String(v.labels.verb), v.value);
  const reads = new Map<string, { events: number; empty: number }>();
  for (const v of (await costMetrics.subscriptionReads.get()).values) {
    const name = String(v.labels.subscription);
    const r = reads.get(name) ?? { events: 0, empty: 0 };
    r[v.labels.result === 'events' ? 'events' : 'empty'] += v.value;
    reads.set(name, r);
  }
  const cpu = process.cpuUsage();
  return {
    at: now(),
    cpuMs: (cpu.user + cpu.system) / 1000,
    pgCpuMs: server ? postgresCpuMs() : 0,
    appendStatements: await sum(costMetrics.appendStatements),
    appends: await sum(costMetrics.appends),
    events: await sum(costMetrics.events),
    statements: [...byVerb.values()].reduce((a, b) => a + b, 0),
    byVerb,
    dbMs: (await sum(costMetrics.statementSeconds)) * 1000,
    reads,
  };
}

type Cost = Totals & {
  /** subscription reads that found events / found none, and by subscription */
  wakeups: number;
  emptyReads: number;
  bySubscription: Map<string, number>;
  ms: number;
};

function diff(a: Counts, b: Counts): Cost {
  const byVerb = new Map<string, number>();
  for (const [k, v] of b.byVerb) byVerb.set(k, v - (a.byVerb.get(k) ?? 0));
  let wakeups = 0;
  let emptyReads = 0;
  const bySubscription = new Map<string, number>();
  for (const [k, v] of b.reads) {
    const was = a.reads.get(k) ?? { events: 0, empty: 0 };
    wakeups += v.events - was.events;
    emptyReads += v.empty - was.empty;
    bySubscription.set(k, v.events - was.events + (v.empty - was.empty));
  }
  return {
    cpuMs: b.cpuMs - a.cpuMs,
    pgCpuMs: b.pgCpuMs - a.pgCpuMs,
    appendStatements: b.appendStatements - a.appendStatements,
    appends: b.appends - a.appends,
    events: b.events - a.events,
    statements: b.statements - a.statements,
    byVerb,
    dbMs: b.dbMs - a.dbMs,
    wakeups,
    emptyReads,
    bySubscription,
    ms: b.at - a.at,
  };
}

/** `run` less what the same time costs idle, per operation. */
function perOp(run: Cost, idle: Cost, ops: number): Cost {
  const f = run.ms / idle.ms;
  const m = (a: Map<string, number>, b: Map<string, number>) =>
    new Map([...a].map(([k, v]) => [k, (v - (b.get(k) ?? 0) * f) / ops] as const));
  const per = (k: keyof Omit<Cost, 'byVerb' | 'bySubscription'>) => (run[k] - idle[k] * f) / ops;
  return {
    cpuMs: per('cpuMs'),
    pgCpuMs: per('pgCpuMs'),
    appendStatements: per('appendStatements'),
    appends: per('appends'),
    events: per('events'),
    statements: per('statements'),
    byVerb: m(run.byVerb, idle.byVerb),
    dbMs: per('dbMs'),
    wakeups: per('wakeups'),
    emptyReads: per('emptyReads'),
    bySubscription: m(run.bySubscription, idle.bySubscription),
    ms: run.ms / ops,
  };
}

/** Streams appended to and subscription reads that found events so far: what `quiet` watches. */
async function activity(): Promise<number> {
  let n = await sum(costMetrics.appends);
  for (const v of (await costMetrics.subscriptionReads.get()).values) if (v.labels.result === 'events') n += v.value;
  return n;
}

/**
 * Waits until nothing has been appended nor found by a subscription for QUIET_MS. It looks every 25 ms at the counters
 * alone: the time it waits is counted in the operation's cost, and reading the CPU there (the server's from `/proc`) cost
 * the operations more than they did (docs/testing.md, twenty-fifth round).
 */
async function quiet(): Promise<void> {
  let last = await activity();
  let since = now();
  const until = now() + DONE_MS;
  while (now() - since < QUIET_MS && now() < until) {
    await sleep(25);
    const a = await activity();
    if (a !== last) {
      last = a;
      since = now();
    }
  }
}

/**
 * Statement shapes by time (PROFILE_STATEMENTS, embedded): PGlite then runs in this thread (PGLITE_THREAD=false), and
 * the bench wraps its `execProtocol`, which the driver calls once per statement (docs/event-store.md#pglite-on-its-own-
 * thread); the statement's text is read from the message (a simple query, or the parse message of one with
 * parameters), and a shape is that text with its whitespace folded. The time is PGlite's own, in this thread.
 */
const shapes = new Map<string, { n: number; ms: number; rows: number }>();
/** the statement's text in a simple-query ('Q') or parse ('P', after the statement's name) message */
const statementText = (m: Uint8Array): string => {
  const z = (from: number) => m.indexOf(0, from);
  const start = m[0] === 0x51 ? 5 : m[0] === 0x50 ? z(5) + 1 : -1;
  return start < 0 ? `(message ${String.fromCharCode(m[0] ?? 63)})` : Buffer.from(m.subarray(start, z(start))).toString('utf8');
};
if (STATEMENTS > 0) {
  const exec = PGlite.prototype.execProtocol;
  PGlite.prototype.execProtocol = async function (this: PGlite, ...args: Parameters<typeof exec>) {
    const text = statementText(args[0]).replace(/\s+/g, ' ').trim();
    const from = text.indexOf(' from "events"');
    const shape = (from > 0 ? `select … ${text.slice(from + 1)}` : text).slice(0, 140);
    const t = performance.now();
    const r = await exec.apply(this, args);
    const v = shapes.get(shape) ?? { n: 0, ms: 0, rows: 0 };
    v.n++;
    v.ms += performance.now() - t;
    v.rows += r.messages.filter((m) => m.name === 'dataRow').length;
    shapes.set(shape, v);
    return r;
  } as typeof exec;
}

// ---------------------------------------------------------------- the receiver

/** Answers every delivery 200: a voice turn with `{"text": "Okay."}`, anything else empty; resolves waiters by text. */
type Receiver = { url: string; seen: (text: string) => Promise<void>; close: () => Promise<void> };

async function startReceiver(): Promise<Receiver> {
  const seen = new Set<string>();
  const waiting = new Map<string, () => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let event: { event?: string; channel?: string; data?: { message?: string; transcript?: string; agentId?: string } } = {};
      try {
        event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        /* not JSON */
      }
      const voice = event.event === 'agent.message' && event.channel === 'voice';
      if (voice) res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"Okay."}');
      else res.writeHead(200).end();
      const key = voice ? event.data?.transcript : event.event === 'agent.created' ? event.data?.agentId : event.data?.message;
      if (key) {
        seen.add(key);
        waiting.get(key)?.();
        waiting.delete(key);
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    seen: (text) =>
      seen.has(text) ? Promise.resolve() : within(new Promise<void>((r) => waiting.set(text, r)), `the receiver to see "${text}"`),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const within = <T>(p: Promise<T>, what: string): Promise<T> =>
  Promise.race([p, sleep(DONE_MS).then(() => Promise.reject(new Error(`timed out waiting for ${what}`)))]);

// ---------------------------------------------------------------- setup and operations

type Line = { key: string; agentId: string; number: { id: string; phoneNumber: string }; hooksAccountId: string };

async function setUp(call: Call, rx: Receiver): Promise<Line> {
  const acc = ok('account', await call('POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { name: 'Profile' } })) as {
    accountId: string;
    apiKey: string;
  };
  ok('credit', await call('POST', `/admin/accounts/${acc.accountId}/credit`, { key: ADMIN_TOKEN, body: { amountMicros: 100_000_000 } }));
  const key = acc.apiKey;
  const agent = ok('agent', await call('POST', '/v1/agents', { key, body: { name: 'Profiled agent' } })) as { id: string };
  const number = ok('number', await call('POST', '/v1/numbers', { key, body: { country: 'CA', agentId: agent.id } })) as {
    id: string;
    phoneNumber: string;
  };
  // the daily caps would stop the number after 100 new conversations (docs/messaging.md#caps)
  ok(
    'messaging settings',
    await call('PATCH', `/admin/accounts/${acc.accountId}/messaging`, {
      key: ADMIN_TOKEN,
      body: { dailyNewConversationLimit: 1_000_000, dailyOutboundLimit: 1_000_000 },
    }),
  );
  ok('webhook', await call('POST', '/v1/webhooks', { key, body: { url: rx.url } }));
  ok('agent webhook', await call('POST', `/v1/agents/${agent.id}/webhook`, { key, body: { url: rx.url } }));
  // a second account whose master webhook takes agent.created only: one delivery per appended AgentCreated
  const hooks = ok('account', await call('POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { name: 'Profile hooks' } })) as {
    accountId: string;
    apiKey: string;
  };
  ok('hooks webhook', await call('POST', '/v1/webhooks', { key: hooks.apiKey, body: { url: rx.url, events: ['agent.created'] } }));
  return { key, agentId: agent.id, number, hooksAccountId: hooks.accountId };
}

type Op = { name: string; run: (i: number) => Promise<void> };

function operations(rt: Runtime, call: Call, rx: Receiver, line: Line, run: string): Op[] {
  const callWithTurns = async (i: number, turns: number) => {
    const c = ok(
      'inbound call',
      await call('POST', '/sandbox/calls/inbound', {
        key: ADMIN_TOKEN,
        body: { from: `+1312${200 + (i % 700)}${String(i).padStart(4, '0')}`, to: line.number.phoneNumber },
      }),
    ) as { callId: string };
    for (let k = 0; k < turns; k++) {
      const text = `Profile ${run} call ${i} turn ${k}`;
      const seen = rx.seen(text);
      ok('say', await call('POST', `/sandbox/calls/${c.callId}/say`, { key: ADMIN_TOKEN, body: { text } }));
      await seen;
      // the reply spoken to its end before the next turn
      const until = now() + DONE_MS;
      for (;;) {
        const v = ok('sandbox view', await call('GET', `/sandbox/calls/${c.callId}`, { key: ADMIN_TOKEN })) as {
          agentSpeech: { state: string }[];
        };
        if ((v.agentSpeech.length > k && v.agentSpeech.every((p) => p.state !== 'queued' && p.state !== 'playing')) || now() > until) break;
        await sleep(5);
      }
    }
    ok('hangup', await call('POST', `/sandbox/calls/${c.callId}/hangup`, { key: ADMIN_TOKEN }));
  };
  return [
    {
      name: 'inbound text (POST /sandbox/inbound -> agent.message answered 200)',
      run: async (i) => {
        const body = `Profile ${run} inbound ${i}: are you open tonight?`;
        const seen = rx.seen(body);
        ok(
          'inject',
          await call('POST', '/sandbox/inbound', {
            key: ADMIN_TOKEN,
            body: { from: `+1416${200 + (i % 50)}${1000 + i}`, to: line.number.phoneNumber, body },
          }),
        );
        await seen;
      },
    },
    {
      name: 'send (POST /v1/messages to a new recipient, and its receipts)',
      run: async (i) => {
        ok(
          'send',
          await call('POST', '/v1/messages', {
            key: line.key,
            body: {
              number_id: line.number.id,
              to_number: `+1312${300 + (i % 200)}${String(1000 + i).padStart(4, '0')}`,
              body: `Profile ${run} send ${i}`,
            },
          }),
        );
        // its tail (submission, the carrier's receipts) is what `quiet()` waits for: no read of it adds statements
      },
    },
    {
      name: 'webhook delivery (AgentCreated appended -> agent.created answered 200)',
      run: async () => {
        const agentId = `agt_profile_${randomUUID().slice(0, 12)}`;
        const seen = rx.seen(agentId);
        const e: NewEvent = {
          id: randomUUID(),
          type: 'AgentCreated',
          metadata: benchMetadata(line.hooksAccountId),
          data: { agentId, accountId: line.hooksAccountId, config: { ...AGENT_DEFAULTS, name: 'Profile', voice: 'sandbox-aria' } },
        };
        await rt.store.appendToStream(`agent-${agentId}`, [e], { expectedRevision: 'no_stream' });
        await seen;
      },
    },
    { name: 'voice call of 1 turn (inbound, one turn, hang-up)', run: (i) => callWithTurns(1000 + i, 1) },
    { name: `voice call of ${1 + TURNS} turns`, run: (i) => callWithTurns(2000 + i, 1 + TURNS) },
  ];
}

type Row = { target: string; op: string; cost: Cost; shapes?: [string, { n: number; ms: number; rows: number }][] };

async function onTarget(target: string, env: Record<string, string>, rx: Receiver): Promise<Row[]> {
  const cfg = benchConfig(ADMIN_TOKEN, {
    ...UNCAPPED_TEXTS,
    // statement shapes are read in this thread (see `shapes`)
    ...(STATEMENTS > 0 ? { PGLITE_THREAD: 'false' } : {}),
    SANDBOX_VOICE_WORDS_PER_MINUTE: '6000',
    SANDBOX_VOICE_RING_MS: '0',
    SANDBOX_VOICE_REPLY_PAUSE_MS: '0',
    ...env,
  });
  /** the target is a PostgreSQL server, whose processes' CPU is read too */
  const onServer = Boolean(cfg.DATABASE_URL);
  const rt = await createRuntime(cfg, createLogger('silent'));
  const server = await listen(rt.app, 0, '127.0.0.1', rt.upgrades);
  const { call, close } = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const rows: Row[] = [];
  try {
    const line = await setUp(call, rx);
    const run = randomBytes(3).toString('hex');
    const ops = operations(rt, call, rx, line, run);
    // warm-up, not counted: the first of each in a fresh process pays for compilation
    for (const op of ops) {
      await op.run(900);
      await quiet();
    }
    const idles: Cost[] = [];
    for (const op of ops) {
      const i0 = await counts(onServer);
      await sleep(IDLE_MS);
      const idle = diff(i0, await counts(onServer));
      idles.push(idle);
      const a = await counts(onServer);
      shapes.clear();
      for (let i = 0; i < OPS; i++) {
        await op.run(i);
        await quiet();
      }
      rows.push({
        target,
        op: op.name,
        cost: perOp(diff(a, await counts(onServer)), idle, OPS),
        shapes: [...shapes].sort((x, y) => y[1].ms - x[1].ms).slice(0, STATEMENTS),
      });
    }
    const [one, many] = rows.slice(-2);
    rows.push({ target, op: `voice turn (the difference of the two calls, per turn)`, cost: minus(many!.cost, one!.cost, TURNS) });
    rows.push({ target, op: `idle, per second (nothing asked; the windows before each operation)`, cost: perSecond(idles) });
    return rows;
  } finally {
    close();
    server.closeAllConnections();
    await Promise.all([new Promise<void>((r) => server.close(() => r())), rt.upgrades.drain()]);
    await rt.close();
  }
}

/** Σ weight × cost, field by field; a map holds every key of the terms' maps. */
function linear(terms: readonly (readonly [Cost, number])[]): Cost {
  const s = (k: keyof Omit<Cost, 'byVerb' | 'bySubscription'>) => terms.reduce((n, [c, w]) => n + c[k] * w, 0);
  const m = (pick: (c: Cost) => Map<string, number>) => {
    const out = new Map<string, number>();
    for (const [c, w] of terms) for (const [k, v] of pick(c)) out.set(k, (out.get(k) ?? 0) + v * w);
    return out;
  };
  return {
    cpuMs: s('cpuMs'),
    pgCpuMs: s('pgCpuMs'),
    appendStatements: s('appendStatements'),
    appends: s('appends'),
    events: s('events'),
    statements: s('statements'),
    byVerb: m((c) => c.byVerb),
    dbMs: s('dbMs'),
    wakeups: s('wakeups'),
    emptyReads: s('emptyReads'),
    bySubscription: m((c) => c.bySubscription),
    ms: s('ms'),
  };
}

/** What the idle windows cost together, per second: the work that runs whatever the load (polls, leases, timers). */
function perSecond(idles: readonly Cost[]): Cost {
  const ms = idles.reduce((n, c) => n + c.ms, 0);
  return linear(idles.map((c) => [c, 1000 / ms] as const));
}

/** `a` less `b`, divided by `n`. */
const minus = (a: Cost, b: Cost, n: number): Cost =>
  linear([
    [a, 1 / n],
    [b, -1 / n],
  ]);

// ---------------------------------------------------------------- printing

const f1 = (x: number) => (Math.abs(x) < 0.05 ? '0' : x.toFixed(1));

function print(rows: readonly Row[], pg: boolean): void {
  const header = ['target', 'operation', 'appends', 'events', 'append stmts', 'statements', 'wake-ups', 'empty reads', 'CPU ms', 'db ms'];
  if (pg) header.push('PG CPU ms');
  const cells = rows.map((r) => {
    const c = r.cost;
    const out = [
      r.target,
      r.op,
      f1(c.appends),
      f1(c.events),
      f1(c.appendStatements),
      f1(c.statements),
      f1(c.wakeups),
      f1(c.emptyReads),
      f1(c.cpuMs),
      f1(c.dbMs),
    ];
    if (pg) out.push(f1(c.pgCpuMs));
    return out;
  });
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  const line = (cs: readonly string[]) => cs.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-+-'));
  for (const c of cells) console.log(line(c));
  console.log('\nstatements by kind, and subscriptions woken (reads), per operation:');
  for (const r of rows) {
    const verbs = [...r.cost.byVerb].filter(([, v]) => Math.abs(v) >= 0.05).sort((a, b) => b[1] - a[1]);
    const subs = [...r.cost.bySubscription].filter(([, v]) => Math.abs(v) >= 0.05).sort((a, b) => b[1] - a[1]);
    console.log(`${r.target} | ${r.op}`);
    console.log(`  statements: ${verbs.map(([k, v]) => `${k} ${f1(v)}`).join(', ')}`);
    console.log(`  reads: ${subs.map(([k, v]) => `${k} ${f1(v)}`).join(', ')}`);
    for (const [shape, v] of r.shapes ?? [])
      console.log(`  ${f1(v.n / OPS).padStart(5)} × ${f1(v.ms / OPS).padStart(5)} ms ${f1(v.rows / OPS).padStart(5)} rows  ${shape}`);
  }
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  console.log(
    `profile bench: node ${process.version}; ${OPS} of each operation one at a time, quiet ${QUIET_MS} ms, idle measured ${IDLE_MS} ms; ${targetsLine(url)}`,
  );
  const rx = await startReceiver();
  let rows: Row[];
  try {
    rows = await onEachTarget(url, (name, env) => onTarget(name, env, rx));
  } finally {
    await rx.close();
  }
  console.log('');
  print(rows, url !== undefined);
  console.log(
    '\nper operation, the idle cost over the same time taken off: appends = streams appended to; append stmts = statements that ' +
      'appended (one may carry several streams); statements = every statement through the query builder (begin and commit ' +
      'included); wake-ups = subscription reads that found events; empty reads = reads that found none; CPU ms = this ' +
      "process's CPU (user + system); db ms = time from sending statements to their answers (embedded: PGlite on this thread)",
  );
}

runBench(main);

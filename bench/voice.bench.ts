/**
 * The platform's own overhead per voice turn (`npm run bench:voice`), end to end through the public HTTP API.
 *
 * The real runtime (`createRuntime`, as `npm start` builds it, ROLE=all) listens on 127.0.0.1 in sandbox mode and
 * the bench is its client. Setup goes through the API: an account with credit (admin API), an agent in webhook
 * mode without a greeting, a number attached to it, and the agent's webhook (`POST /v1/agents/{id}/webhook`) to a
 * local `node:http` receiver on 127.0.0.1 that answers every voice turn at once (sandbox mode allows loopback,
 * docs/webhooks.md#configuration): alternately a JSON `{text}` and an NDJSON stream (its first line at once, a
 * second 20 ms later). The call caps are raised through the configuration (CALL_MAX_CONCURRENT_PER_NUMBER,
 * CALL_MAX_CONCURRENT_PER_ACCOUNT) and the sandbox voice speaks at SANDBOX_VOICE_WORDS_PER_MINUTE=VOICE_WPM, so
 * the figures are the platform's, not the caps' or the simulated speech's.
 *
 * Calls are rung in with `POST /sandbox/calls/inbound` from a driven caller (docs/sandbox.md#voice), which speaks
 * each caller turn with `POST /sandbox/calls/{id}/say` once the agent's reply to the previous one has been
 * spoken (and VOICE_PAUSE_MS more), and hangs up after its last turn: a closed loop, so a slower platform also
 * means fewer turns a second. The driven callers run on a worker thread (bench/support/voice-callers.ts), so that
 * sending and reading their requests is not counted as the platform's main thread's work; serving them is, so a
 * caller waits for each reply to be spoken with one request (`GET /sandbox/calls/{id}?agentQuietAfter=N`), where
 * it used to poll the far end's view every 10 ms. Per target, after two uncounted calls of 4
 * turns (a fresh process compiles):
 *  1. one call alone, VOICE_SOLO_TURNS turns: the platform otherwise idle;
 *  2. VOICE_CALLS calls at once, VOICE_TURNS turns each.
 *
 * Two views of every agent turn (docs/calls.md#latency):
 *  - the call's record: `latency` {requestMs, firstByteMs, speechStartMs} of each agent turn, taken from the
 *    `AgentTurnRecorded` events (`GET /v1/calls/{id}` rounds them to whole milliseconds; the bench checks that
 *    both agree);
 *  - from outside: the caller's utterance end (`farEndSpeech[].endedAt` of `GET /sandbox/calls/{id}`) → the
 *    receiver seeing the request (its `request` event); the receiver writing its answer → the agent's playback
 *    handed to the engine (`agentSpeech[].queuedAt`); and the whole of it, utterance end → playback. The
 *    receiver runs on a worker thread, so its clock readings are not held up by the server's event loop. The
 *    sandbox's times are ISO strings with whole milliseconds, each read as the middle of its millisecond
 *    (±0.5 ms); the outside request leg also holds the engine's hand-over of the final transcript (a
 *    `setImmediate`).
 *
 * Platform overhead per turn is requestMs + speechStartMs (the webhook's own time, firstByteMs, is not the
 * platform's). The goal (p99 under 10 ms) is checked on that sum, by the record and from outside. When the two
 * views differ, the outside one is what a caller hears: time the record does not see is time its marks miss.
 *
 * A web call (docs/calls.md#web-calls), with the offline engines: a page on a worker thread joins a web call of
 * the same agent over the socket and says one question VOICE_WEB_TURNS times, rendered once by espeak-ng and sent
 * in real time as 20 ms frames (then silence), each turn once the reply to the previous one has been spoken. The
 * server detects the end of each utterance (WEB_CALL_END_SILENCE_MS of silence), recognises it with pocketsphinx,
 * asks the webhook, renders the answer with espeak-ng and streams it back. Figures: from outside, the end of the
 * question's speech (its last frame sent) → the first frame of the reply's audio at the page; from the record, the
 * turn's split {recognitionMs, requestMs, firstByteMs, speechStartMs, synthesisMs}. The outside figure also holds
 * the silence the server waits for before it calls an utterance over.
 *
 * Targets: PGlite in memory, and with DATABASE_URL also that server, in a scratch database created and dropped here
 * (the role needs CREATEDB). One process runs the server, its background work and this client (the receiver and
 * the callers are threads of it); the share of time its main thread was busy, and that thread's CPU a call, are
 * printed per scenario. Figures are printed, never asserted.
 */

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { callStream } from '../domain/call/call.js';
import { createLogger } from '../infrastructure/logger.js';
import { createRuntime, listen, type Runtime } from '../infrastructure/runtime.js';
import { decodeWav, resample } from '../infrastructure/speech/wav.js';
import { benchConfig, runBench } from './support/bench.js';
import { mainThreadCpuMs, mainThreadSchedMs } from './support/cpu.js';
import { durability, serverVersion } from './support/database-facts.js';
import { type Call, client, type Reply } from './support/http-client.js';
import { runOnTargets, targetsLine } from './support/scratch-db.js';
import { type AnswerKind, type Driven, startCallers } from './support/voice-callers.js';

const positive = (name: string, def: number): number => {
  const raw = process.env[name];
  const v = raw === undefined || raw === '' ? def : Number(raw);
  if (!(v > 0) || !Number.isFinite(v)) throw new Error(`${name} must be a positive number, got ${raw}`);
  return v;
};
const nonNegative = (name: string, def: number): number => {
  const raw = process.env[name];
  const v = raw === undefined || raw === '' ? def : Number(raw);
  if (!(v >= 0) || !Number.isFinite(v)) throw new Error(`${name} must be a number >= 0, got ${raw}`);
  return v;
};
const CALLS = Math.round(positive('VOICE_CALLS', 20));
const TURNS = Math.round(positive('VOICE_TURNS', 10));
const SOLO_TURNS = Math.round(positive('VOICE_SOLO_TURNS', 40));
const WPM = Math.round(positive('VOICE_WPM', 6000));
const PAUSE_MS = nonNegative('VOICE_PAUSE_MS', 100);
const WEB_TURNS = Math.round(positive('VOICE_WEB_TURNS', 10));
/** what the web caller says, every turn */
const WEB_QUESTION = 'What are your opening hours on Saturday?';
const TURN_TIMEOUT_MS = 30_000;
const GOAL_MS = 10;
const ADMIN_TOKEN = randomBytes(24).toString('hex');
/** the NDJSON answer's second line follows its first this much later */
const NDJSON_GAP_MS = 20;

const now = () => performance.now();
/** An ISO time of the sandbox (whole milliseconds, truncated) as the middle of its millisecond. */
const isoMs = (iso: string) => Date.parse(iso) + 0.5;

const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
};

const ok = (what: string, r: Reply): any => {
  if (r.status < 200 || r.status > 299) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

// ---------------------------------------------------------------- the developer's webhook

/** One voice turn as the receiver saw it; times are wall-clock ms (`wall()` of the receiver's thread). */
type Hit = {
  callId: string;
  /** the caller turn's id (`data.turnId`), which the agent turn names as `replyTo` */
  turnId: string;
  transcript: string;
  kind: AnswerKind;
  /** the request's headers were parsed */
  arrivedAt: number;
  /** the answer (its status line and first line) was handed to the socket */
  answeredAt: number;
};

/** What the agent is told to say, per answer kind. */
const ANSWER = { json: 'Okay, noted.', ndjson: ['Sure.', 'Anything else?'] } as const;
/** How many playbacks the agent speaks for an answer of each kind. */
const SPOKEN: Record<AnswerKind, { playbacks: number }> = { json: { playbacks: 1 }, ndjson: { playbacks: 2 } };

/**
 * The receiver runs on a thread of its own, so that when it sees a request and when it answers are not held up
 * by the server's event loop (PGlite runs in the main thread). The caller's words end with the answer kind wanted
 * (`… json`, `… ndjson`); any other request (e.g. `agent.call_ended`) is answered `{}` and counted.
 */
const RECEIVER_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { createServer } = require('node:http');
const { performance } = require('node:perf_hooks');
const base = (() => { const t = Date.now(); let d = Date.now(); while (d === t) d = Date.now(); return d - performance.now(); })();
const wall = () => base + performance.now();
const sockets = new Set();
const server = createServer((req, res) => {
  const arrivedAt = wall();
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body = {};
    try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch {}
    const d = body.data || {};
    const voice = body.event === 'agent.message' && body.channel === 'voice' && typeof d.transcript === 'string';
    const kind = !voice ? null : d.direction === 'web' ? 'json' : / ndjson$/.test(d.transcript) ? 'ndjson' : / json$/.test(d.transcript) ? 'json' : null;
    if (!kind) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      parentPort.postMessage({ other: body.event || 'unparsed' });
      return;
    }
    const answeredAt = wall();
    if (kind === 'json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: workerData.json }));
    } else {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(JSON.stringify({ text: workerData.ndjson[0] }) + '\\n');
      setTimeout(() => res.end(JSON.stringify({ text: workerData.ndjson[1] }) + '\\n'), workerData.gapMs);
    }
    const hit = { callId: d.callId, turnId: d.turnId, transcript: d.transcript, kind, arrivedAt, answeredAt };
    parentPort.postMessage({ hit });
    if (callers) callers.postMessage({ hit });
  });
});
server.keepAliveTimeout = 30000;
server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
// the driven callers' thread of a scenario listens on a port of its own
let callers = null;
parentPort.on('message', (m) => {
  if (m && m.callers) {
    if (callers) callers.close();
    callers = m.callers;
    return;
  }
  for (const s of sockets) s.destroy();
  server.close(() => parentPort.close());
});
`;

type Receiver = {
  url: string;
  /** every voice turn answered, by the caller turn's id */
  hits: Map<string, Hit>;
  /** requests that were not a voice turn of this bench (e.g. `agent.call_ended`), by event */
  other: Map<string, number>;
  /** a port on which the receiver also tells every voice turn it answers (`{ hit }`), from now on */
  tell: () => MessagePort;
  close: () => Promise<void>;
};

async function startReceiver(): Promise<Receiver> {
  const hits = new Map<string, Hit>();
  const other = new Map<string, number>();
  const worker = new Worker(RECEIVER_THREAD, {
    eval: true,
    workerData: { json: ANSWER.json, ndjson: ANSWER.ndjson, gapMs: NDJSON_GAP_MS },
  });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (m: { port?: number; hit?: Hit; other?: string }) => {
      if (m.port !== undefined) resolve(m.port);
      else if (m.other !== undefined) other.set(m.other, (other.get(m.other) ?? 0) + 1);
      else if (m.hit) {
        hits.set(m.hit.turnId, m.hit);
      }
    });
  });
  return {
    url: `http://127.0.0.1:${port}/voice`,
    hits,
    other,
    tell: () => {
      const { port1, port2 } = new MessageChannel();
      worker.postMessage({ callers: port1 }, [port1]);
      return port2;
    },
    close: async () => {
      const exited = new Promise<void>((r) => worker.once('exit', () => r()));
      worker.postMessage('close');
      await exited;
    },
  };
}

// ---------------------------------------------------------------- setup, as a client would

type Line = { key: string; agentId: string; phoneNumber: string };

async function setUp(call: Call, rx: Receiver): Promise<Line> {
  const acc = ok('create account', await call('POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { name: 'Voice bench' } })) as {
    accountId: string;
    apiKey: string;
  };
  ok('credit', await call('POST', `/admin/accounts/${acc.accountId}/credit`, { key: ADMIN_TOKEN, body: { amountMicros: 100_000_000 } }));
  const key = acc.apiKey;
  const agent = ok('agent', await call('POST', '/v1/agents', { key, body: { name: 'Bench voice agent' } })) as { id: string };
  const num = ok('number', await call('POST', '/v1/numbers', { key, body: { country: 'US', agentId: agent.id } })) as {
    phoneNumber: string;
  };
  ok('agent webhook', await call('POST', `/v1/agents/${agent.id}/webhook`, { key, body: { url: rx.url } }));
  return { key, agentId: agent.id, phoneNumber: num.phoneNumber };
}

// ---------------------------------------------------------------- collecting the turns

type TurnFigures = {
  kind: AnswerKind | null;
  requestMs: number | null;
  firstByteMs: number | null;
  speechStartMs: number | null;
  ext: { requestMs: number; webhookMs: number; speechStartMs: number; totalMs: number } | null;
};

type Collected = {
  turns: TurnFigures[];
  /** agent turns of the record whose latency differs from the event's, rounded */
  disagreements: number;
  silent: Map<string, number>;
  interrupted: number;
  notEnded: number;
};

async function collect(rt: Runtime, call: Call, rx: Receiver, line: Line, driven: readonly Driven[]): Promise<Collected> {
  const out: Collected = { turns: [], disagreements: 0, silent: new Map(), interrupted: 0, notEnded: 0 };
  for (const d of driven) {
    const record = ok('call record', await call('GET', `/v1/calls/${d.callId}?wait=true&timeout=30`, { key: line.key })) as {
      status: string;
      turns: { id: string; role: string; replyTo: string | null; latency: Record<string, number | null> | null }[];
    };
    if (record.status === 'in-progress') out.notEnded++;
    const view = ok('sandbox view', await call('GET', `/sandbox/calls/${d.callId}`, { key: ADMIN_TOKEN })) as {
      agentSpeech: { playbackId: string; queuedAt: string }[];
      farEndSpeech: { text: string; endedAt: string | null }[];
    };
    const events = await rt.store.readStream(callStream(d.callId));
    const apiTurns = new Map(record.turns.map((t) => [t.id, t]));
    for (const e of events) {
      if (e.type !== 'AgentTurnRecorded') continue;
      const data = e.data as {
        turnId: string;
        source: string;
        replyTo: string | null;
        interrupted: boolean;
        silentReason: string | null;
        latency: { requestMs: number | null; firstByteMs: number | null; speechStartMs: number | null } | null;
      };
      if (data.source !== 'webhook') continue;
      if (data.interrupted) out.interrupted++;
      if (data.silentReason) out.silent.set(data.silentReason, (out.silent.get(data.silentReason) ?? 0) + 1);
      const l = data.latency;
      const api = apiTurns.get(data.turnId)?.latency ?? null;
      const round = (v: number | null | undefined) => (v === null || v === undefined ? null : Math.round(v));
      if (
        round(l?.requestMs) !== round(api?.requestMs) ||
        round(l?.firstByteMs) !== round(api?.firstByteMs) ||
        round(l?.speechStartMs) !== round(api?.speechStartMs)
      )
        out.disagreements++;
      const hit = data.replyTo ? rx.hits.get(data.replyTo) : undefined;
      const utterance = hit ? view.farEndSpeech.find((u) => u.text === hit.transcript) : undefined;
      const playback = view.agentSpeech.find((p) => p.playbackId === `${data.turnId}.0`);
      const ext =
        hit && utterance?.endedAt && playback
          ? {
              requestMs: hit.arrivedAt - isoMs(utterance.endedAt),
              webhookMs: hit.answeredAt - hit.arrivedAt,
              speechStartMs: isoMs(playback.queuedAt) - hit.answeredAt,
              totalMs: isoMs(playback.queuedAt) - isoMs(utterance.endedAt),
            }
          : null;
      out.turns.push({
        kind: hit?.kind ?? null,
        requestMs: l?.requestMs ?? null,
        firstByteMs: l?.firstByteMs ?? null,
        speechStartMs: l?.speechStartMs ?? null,
        ext,
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------- a web call

/**
 * The page, on a thread of its own (so its clock readings and its real-time microphone are not held up by the
 * server's event loop): it joins with the token, streams the microphone continuously (silence, and the question
 * when a turn is due), and notes per turn when the question's last frame went out and when the reply's first audio
 * frame came back. The next turn starts once the reply's speech has ended and `pauseMs` more have passed.
 */
const PAGE_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const WebSocket = require('ws');
const base = (() => { const t = Date.now(); let d = Date.now(); while (d === t) d = Date.now(); return d - performance.now(); })();
const wall = () => base + performance.now();
const { url, token, question, turns, pauseMs, timeoutMs } = workerData;
const FRAME = 320;
const silence = Buffer.alloc(FRAME * 2);
const frames = [];
for (let at = 0; at < question.length; at += FRAME * 2) frames.push(Buffer.from(question.subarray(at, at + FRAME * 2)));
const results = [];
let queue = [];
let turn = null;
let sent = 0;
let start = 0;
const ws = new WebSocket(url);
ws.on('open', () => ws.send(JSON.stringify({ type: 'join', accessToken: token })));
ws.on('message', (data, isBinary) => {
  if (isBinary) {
    if (turn && turn.speechEnd !== null && turn.audioAt === null) turn.audioAt = wall();
    return;
  }
  const m = JSON.parse(data.toString());
  if (m.type === 'joined') {
    start = performance.now();
    setInterval(tick, 10);
    setTimeout(next, 500);
  } else if (m.type === 'speech_end' && turn && turn.audioAt !== null) {
    const done = turn;
    turn = null;
    results.push({ speechEnd: done.speechEnd, audioAt: done.audioAt });
    clearTimeout(done.timer);
    setTimeout(next, pauseMs);
  } else if (m.type === 'error') {
    parentPort.postMessage({ error: m });
  }
});
ws.on('close', () => parentPort.postMessage({ done: results }));
// the microphone: one 20 ms frame per 20 ms of the clock, the question's frames when queued, else silence
function tick() {
  const due = Math.floor((performance.now() - start) / 20);
  while (sent < due) {
    sent++;
    const f = queue.shift();
    ws.send(f || silence, { binary: true });
    if (f && queue.length === 0 && turn) turn.speechEnd = wall();
  }
}
function next() {
  if (results.length + (turn ? 1 : 0) >= turns) {
    ws.send(JSON.stringify({ type: 'hangup' }));
    return;
  }
  turn = { speechEnd: null, audioAt: null, timer: setTimeout(() => { results.push({ speechEnd: null, audioAt: null }); turn = null; next(); }, timeoutMs) };
  queue = frames.slice();
}
`;

/** The question as espeak-ng says it in its plain US voice (which pocketsphinx recognises best), as 16 kHz PCM bytes. */
async function questionPcm(): Promise<Uint8Array> {
  const { stdout } = await promisify(execFile)('espeak-ng', ['--stdout', '-v', 'en-us', '-s', '150', WEB_QUESTION], {
    encoding: 'buffer',
    maxBuffer: 16 << 20,
  });
  const pcm = resample(decodeWav(stdout), 16_000).samples;
  const bytes = Buffer.alloc(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) bytes.writeInt16LE(pcm[i]!, i * 2);
  return bytes;
}

async function webCallScenario(b: Bench, url: string, endSilenceMs: number): Promise<Summary> {
  const { target, rt, call, line } = b;
  const name = `web call, ${WEB_TURNS} turns (pocketsphinx + espeak-ng)`;
  const question = await questionPcm();
  const t0 = now();
  const elu0 = performance.eventLoopUtilization();
  const web = ok('web call', await call('POST', '/v1/calls/web', { key: line.key, body: { agentId: line.agentId } })) as {
    callId: string;
    accessToken: string;
  };
  const setupMs = now() - t0;
  const page = new Worker(PAGE_THREAD, {
    eval: true,
    workerData: {
      url: `${url.replace(/^http/, 'ws')}/v1/calls/web/connect`,
      token: web.accessToken,
      question,
      turns: WEB_TURNS,
      pauseMs: PAUSE_MS + 200,
      timeoutMs: TURN_TIMEOUT_MS,
    },
  });
  const notes: string[] = [];
  const results = await new Promise<{ speechEnd: number | null; audioAt: number | null }[]>((resolve, reject) => {
    page.once('error', reject);
    page.on('message', (m: { done?: { speechEnd: number | null; audioAt: number | null }[]; error?: unknown }) => {
      if (m.error) notes.push(`the socket said ${JSON.stringify(m.error)}`);
      if (m.done) resolve(m.done);
    });
  });
  await page.terminate();
  const seconds = (now() - t0) / 1000;
  const elu = performance.eventLoopUtilization(elu0).utilization;
  await call('GET', `/v1/calls/${web.callId}?wait=true&timeout=30`, { key: line.key });
  const split: Record<'recognitionMs' | 'requestMs' | 'firstByteMs' | 'speechStartMs' | 'synthesisMs', number[]> = {
    recognitionMs: [],
    requestMs: [],
    firstByteMs: [],
    speechStartMs: [],
    synthesisMs: [],
  };
  const sums: number[] = [];
  const silent = new Map<string, number>();
  for (const e of await rt.store.readStream(callStream(web.callId))) {
    if (e.type !== 'AgentTurnRecorded') continue;
    const d = e.data as { source: string; silentReason: string | null; latency: Partial<Record<keyof typeof split, number | null>> | null };
    if (d.source !== 'webhook') continue;
    if (d.silentReason) silent.set(d.silentReason, (silent.get(d.silentReason) ?? 0) + 1);
    if (!d.latency) continue;
    let sum = 0;
    for (const k of Object.keys(split) as (keyof typeof split)[]) {
      const v = d.latency[k];
      if (typeof v === 'number') {
        split[k].push(v);
        sum += v;
      }
    }
    sums.push(sum);
  }
  const outside = results.filter((r) => r.speechEnd !== null && r.audioAt !== null).map((r) => r.audioAt! - r.speechEnd!);
  const row = (figure: string, values: number[]): Row => ({ target, scenario: name, figure, values });
  const missing = results.filter((r) => r.audioAt === null).length;
  return {
    target,
    scenario: name,
    calls: 1,
    turns: outside.length,
    seconds,
    elu,
    setupP50: setupMs,
    goal: false,
    rows: [
      row('outside: speech end -> reply audio at the page', outside),
      row('record: recognitionMs (utterance end -> transcript)', split.recognitionMs),
      row('record: requestMs', split.requestMs),
      row('record: firstByteMs (the webhook)', split.firstByteMs),
      row('record: speechStartMs', split.speechStartMs),
      row('record: synthesisMs (espeak-ng, first sentence)', split.synthesisMs),
      row('record: the five summed', sums),
    ],
    notes: [
      `the outside figure includes the ${endSilenceMs} ms of silence (WEB_CALL_END_SILENCE_MS) after which an utterance is over`,
      missing > 0 ? `${missing} turns heard no reply within ${TURN_TIMEOUT_MS / 1000} s` : '',
      ...[...silent].map(([reason, n]) => `${n} silent turns: ${reason}`),
      ...notes,
    ].filter(Boolean),
  };
}

// ---------------------------------------------------------------- scenarios

type Row = { target: string; scenario: string; figure: string; values: number[] };
type Summary = {
  target: string;
  scenario: string;
  calls: number;
  turns: number;
  seconds: number;
  setupP50: number;
  /** the main thread's event loop utilisation over the scenario (0-1): how busy the server's thread was */
  elu: number;
  /** the main thread's CPU over the scenario, in ms (null: no /proc) */
  mainCpuMs?: number | null;
  /** of the scenario's time, the share the main thread ran on a core and the share it waited for one (null: not kept) */
  sched?: { onCore: number; waiting: number } | null;
  rows: Row[];
  notes: string[];
  /** false: a scenario the overhead goal does not apply to (the web call's speech engines) */
  goal?: boolean;
};

type Bench = Readonly<{ target: string; rt: Runtime; base: string; call: Call; rx: Receiver; line: Line; run: string }>;

/** `calls` calls at once, `turns` turns each, from callers numbered from `firstCaller`. */
async function scenario(b: Bench, name: string, calls: number, turns: number, firstCaller: number): Promise<Summary> {
  const { target, rt, call, rx, line, run } = b;
  // the callers run on a thread of their own, loaded before the clock starts (docs/testing.md#voice-npm-run-benchvoice)
  const callers = await startCallers(
    {
      base: b.base,
      adminToken: ADMIN_TOKEN,
      phoneNumber: line.phoneNumber,
      run,
      calls,
      turns,
      firstCaller,
      pauseMs: PAUSE_MS,
      turnTimeoutMs: TURN_TIMEOUT_MS,
      spoken: SPOKEN,
    },
    rx.tell(),
  );
  const t0 = now();
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = mainThreadCpuMs();
  const sched0 = mainThreadSchedMs();
  const driven = await callers.run();
  const seconds = (now() - t0) / 1000;
  const elu = performance.eventLoopUtilization(elu0).utilization;
  const cpu1 = mainThreadCpuMs();
  const sched1 = mainThreadSchedMs();
  const c = await collect(rt, call, rx, line, driven);
  const pick = (f: (t: TurnFigures) => number | null | undefined, only?: AnswerKind) =>
    c.turns
      .filter((t) => !only || t.kind === only)
      .map(f)
      .filter((v): v is number => typeof v === 'number');
  const sum = (t: TurnFigures) => (t.requestMs === null || t.speechStartMs === null ? null : t.requestMs + t.speechStartMs);
  const extSum = (t: TurnFigures) => (t.ext ? t.ext.requestMs + t.ext.speechStartMs : null);
  const row = (figure: string, values: number[]): Row => ({ target, scenario: name, figure, values });
  const rows = [
    row(
      'record: requestMs',
      pick((t) => t.requestMs),
    ),
    row(
      'record: speechStartMs, JSON answer',
      pick((t) => t.speechStartMs, 'json'),
    ),
    row(
      'record: speechStartMs, NDJSON answer',
      pick((t) => t.speechStartMs, 'ndjson'),
    ),
    row('record: overhead = requestMs + speechStartMs', pick(sum)),
    row(
      'record: firstByteMs (the webhook, for information)',
      pick((t) => t.firstByteMs),
    ),
    row(
      'outside: utterance end -> request at receiver',
      pick((t) => t.ext?.requestMs),
    ),
    row(
      'outside: receiver answered -> speech queued',
      pick((t) => t.ext?.speechStartMs),
    ),
    row('outside: overhead = the two above', pick(extSum)),
    row(
      'outside: utterance end -> speech queued (all)',
      pick((t) => t.ext?.totalMs),
    ),
    row(
      'outside: receiver arrival -> answer written',
      pick((t) => t.ext?.webhookMs),
    ),
  ];
  const expected = driven.reduce((n, d) => n + d.turns, 0);
  const missing = driven.reduce((n, d) => n + d.missing, 0);
  const notes = [
    c.turns.length !== expected ? `${c.turns.length} webhook turns recorded of ${expected} said` : '',
    missing > 0 ? `${missing} turns never reached the webhook within ${TURN_TIMEOUT_MS / 1000} s` : '',
    c.turns.some((t) => !t.ext) ? `${c.turns.filter((t) => !t.ext).length} turns without an outside measurement` : '',
    c.disagreements > 0
      ? `${c.disagreements} turns whose GET /v1/calls latency differs from the event's (rounded)`
      : `GET /v1/calls/{id} agrees with the events on every turn's latency (rounded)`,
    c.interrupted > 0 ? `${c.interrupted} agent turns interrupted` : '',
    ...[...c.silent].map(([reason, n]) => `${n} silent turns: ${reason}`),
    c.notEnded > 0 ? `${c.notEnded} calls still in progress 30 s after the hang-up` : '',
  ].filter(Boolean);
  return {
    target,
    scenario: name,
    calls,
    turns: c.turns.length,
    seconds,
    elu,
    mainCpuMs: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0,
    sched:
      sched0 && sched1
        ? { onCore: (sched1.onCore - sched0.onCore) / (seconds * 1000), waiting: (sched1.waiting - sched0.waiting) / (seconds * 1000) }
        : null,
    setupP50: percentile(
      driven.map((d) => d.setupMs),
      50,
    ),
    rows,
    notes,
  };
}

async function onTarget(target: string, env: Record<string, string>, rx: Receiver, notes: string[]): Promise<Summary[]> {
  const cfg = benchConfig(ADMIN_TOKEN, {
    // the bench measures the platform, not the caps (every call is on one number)
    CALL_MAX_CONCURRENT_PER_NUMBER: '10000',
    CALL_MAX_CONCURRENT_PER_ACCOUNT: '10000',
    // the simulated speech is fast, so the run is short; it is not part of any figure
    SANDBOX_VOICE_WORDS_PER_MINUTE: String(WPM),
    SANDBOX_VOICE_RING_MS: '0',
    SANDBOX_VOICE_REPLY_PAUSE_MS: '0',
    ...(process.env.WEB_CALL_END_SILENCE_MS ? { WEB_CALL_END_SILENCE_MS: process.env.WEB_CALL_END_SILENCE_MS } : {}),
    ...env,
  });
  const rt = await createRuntime(cfg, createLogger('silent'));
  const server = await listen(rt.app, 0, '127.0.0.1', rt.upgrades);
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { call, close } = client(base);
  try {
    notes.push(
      `${target}: PostgreSQL ${await serverVersion(rt.database.db)} (${await durability(rt.database.db)}), ` +
        `DATABASE_POOL_SIZE ${cfg.DATABASE_URL ? cfg.DATABASE_POOL_SIZE : '1 (PGlite)'}, EVENT_POLL_INTERVAL_MS ${cfg.EVENT_POLL_INTERVAL_MS}`,
    );
    const line = await setUp(call, rx);
    // warm-up, not counted: the first turns of a fresh process pay for compilation
    const b: Bench = { target, rt, base, call, rx, line, run: randomBytes(3).toString('hex') };
    await scenario(b, 'warm-up', 2, 4, 0);
    const solo = await scenario(b, `1 call, ${SOLO_TURNS} turns`, 1, SOLO_TURNS, 10);
    // the load once before it is measured, and printed: the process compiles the code that load makes hot meanwhile,
    // on threads that take the cores the load runs on (docs/testing.md#voice-npm-run-benchvoice)
    const first = await scenario(b, `${CALLS} calls at once, ${TURNS} turns each, the process's first`, CALLS, TURNS, 1000);
    return [
      solo,
      first,
      await scenario(b, `${CALLS} calls at once, ${TURNS} turns each`, CALLS, TURNS, 100),
      await webCallScenario(b, base, cfg.WEB_CALL_END_SILENCE_MS),
    ];
  } finally {
    close();
    server.closeAllConnections();
    await Promise.all([new Promise<void>((r) => server.close(() => r())), rt.upgrades.drain()]);
    await rt.close();
  }
}

// ---------------------------------------------------------------- printing

function print(summaries: readonly Summary[]): void {
  const header = ['target', 'scenario', 'figure (ms)', 'turns', 'p50', 'p99', 'max'];
  const f = (v: number) => (Number.isNaN(v) ? '-' : v.toFixed(2));
  const rows = summaries.flatMap((s) =>
    s.rows.map((r) => [
      r.target,
      r.scenario,
      r.figure,
      String(r.values.length),
      f(percentile(r.values, 50)),
      f(percentile(r.values, 99)),
      f(r.values.length ? Math.max(...r.values) : Number.NaN),
    ]),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i >= 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join(' | ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('-+-');
  console.log(line(header));
  console.log(rule);
  let previous = '';
  for (const r of rows) {
    const group = `${r[0]}/${r[1]}`;
    if (previous && group !== previous) console.log(rule);
    previous = group;
    console.log(line(r));
  }
  console.log('');
  for (const s of summaries) {
    if (s.goal === false) {
      const total = s.rows[0]?.values ?? [];
      console.log(
        `${s.target}, ${s.scenario}: ${s.turns} turns in ${s.seconds.toFixed(1)} s, main thread busy ${Math.round(s.elu * 100)}%, ` +
          `web call created in ${s.setupP50.toFixed(1)} ms; speech end -> reply audio p50 ${f(percentile(total, 50))} ms, ` +
          `p99 ${f(percentile(total, 99))} ms`,
      );
      for (const n of s.notes) console.log(`  ${n}`);
      continue;
    }
    const overhead = (prefix: string) => s.rows.find((r) => r.figure.startsWith(prefix))?.values ?? [];
    const p99 = (xs: number[]) => percentile(xs, 99);
    const rec = p99(overhead('record: overhead'));
    const out = p99(overhead('outside: overhead'));
    const verdict = (v: number) => (Number.isNaN(v) ? 'not measured' : v < GOAL_MS ? 'met' : 'NOT met');
    console.log(
      `${s.target}, ${s.scenario}: ${s.calls} calls, ${s.turns} turns in ${s.seconds.toFixed(1)} s ` +
        `(${(s.calls / s.seconds).toFixed(2)} calls/s, ${(s.turns / s.seconds).toFixed(1)} turns/s; each caller waits for every reply), ` +
        `main thread busy ${Math.round(s.elu * 100)}%${s.calls > 1 ? ` (goal < 50%: ${s.elu < 0.5 ? 'met' : 'NOT met'})` : ''}` +
        // the busy share holds the time the thread waited for a core the machine's other threads had (docs/testing.md)
        (s.sched ? ` [${Math.round(s.sched.onCore * 100)}% on a core, ${Math.round(s.sched.waiting * 100)}% waiting for one]` : '') +
        // CPU, which leaves out time the thread waited for a core: steadier than the busy share on a shared machine
        (s.mainCpuMs != null ? `, its CPU ${(s.mainCpuMs / s.calls).toFixed(1)} ms a call (set-up, turns, hang-up)` : '') +
        '; ' +
        `inbound call setup p50 ${s.setupP50.toFixed(1)} ms; goal p99 overhead < ${GOAL_MS} ms: ` +
        `record ${f(rec)} ms ${verdict(rec)}, outside ${f(out)} ms ${verdict(out)}`,
    );
    for (const n of s.notes) console.log(`  ${n}`);
  }
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  console.log(
    `voice bench: node ${process.version}; 1 call × ${SOLO_TURNS} turns, then ${CALLS} calls × ${TURNS} turns; ` +
      `a web call × ${WEB_TURNS} turns; caller speech ${WPM} words/min, ${PAUSE_MS} ms after each reply; ${targetsLine(url)}`,
  );
  console.log(
    "record = the agent turns' latency (docs/calls.md#latency); outside = sandbox far-end times (±0.5 ms) and the receiver's clock",
  );
  const started = now();
  const rx = await startReceiver();
  await runOnTargets(url, rx, onTarget, print);
  if (rx.other.size > 0) console.log(`other deliveries to the receiver: ${[...rx.other].map(([k, v]) => `${k}×${v}`).join(', ')}`);
  console.log(
    'one process serves the API, runs the projectors, reactors and workers, and runs this client; the receiver and the driven callers are worker threads of it',
  );
  console.log(`\ntotal ${((now() - started) / 1000).toFixed(1)} s`);
}

runBench(main);

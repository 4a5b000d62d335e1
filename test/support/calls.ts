import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { CallSettings } from '../../domain/call/call.js';
import { ADMIN_TOKEN, type TestApp } from './http.js';
import { credit, eventually } from './numbers.js';

/** The sandbox voice's magic numbers (docs/sandbox.md#voice). */
export const FAR_END = {
  talker: '+16465550150',
  busy: '+16465550151',
  noAnswer: '+16465550152',
  providerError: '+16465550153',
  invalid: '+16465550154',
  voicemail: '+16465550155',
  screener: '+16465550156',
  menu: '+16465550157',
  interrupter: '+16465550158',
  backchanneler: '+16465550159',
  silent: '+16465550160',
  hangUp: '+16465550161',
} as const;

/** Env of a test app whose sandbox speech is fast (10 ms a word) and whose far end answers at once. */
export const FAST_VOICE_ENV = {
  SANDBOX_VOICE_WORDS_PER_MINUTE: '6000',
  SANDBOX_VOICE_RING_MS: '20',
  SANDBOX_VOICE_REPLY_PAUSE_MS: '100',
  CALL_SWEEP_INTERVAL_MS: '100',
};

export type VoiceLine = { accountId: string; key: string; agentId: string; numberId: string; phoneNumber: string };

/** An account with credit, an agent configured with `agent`, and a number attached to it. */
export async function voiceLine(app: TestApp, agent: Record<string, unknown> = {}, name = 'Voice test'): Promise<VoiceLine> {
  const { accountId, apiKey: key } = await app.newAccount(name);
  await credit(app, accountId, 100_000_000);
  const a = await app.call('POST', '/v1/agents', { key, body: { name: 'Caller', ...agent } });
  if (a.status !== 200) throw new Error(`agent: ${a.status} ${JSON.stringify(a.body)}`);
  const n = await app.call('POST', '/v1/numbers', { key, body: { country: 'US', agentId: a.body.id } });
  if (n.status !== 200) throw new Error(`number: ${n.status} ${JSON.stringify(n.body)}`);
  return { accountId, key, agentId: a.body.id, numberId: n.body.id, phoneNumber: n.body.phoneNumber };
}

export type Turn = Readonly<{ headers: IncomingHttpHeaders; rawBody: string; body: any }>;
/** How to answer one voice turn: a JSON object, NDJSON lines (each after `delayMs`), a status, or never. */
export type TurnAnswer = { json: unknown } | { lines: unknown[]; delayMs?: number } | { status: number } | 'hang';

export type VoiceReceiver = Readonly<{
  url: string;
  turns: Turn[];
  answer: (fn: (t: Turn, n: number) => TurnAnswer) => void;
  close: () => Promise<void>;
}>;

/** A developer's voice webhook on 127.0.0.1: records each turn and answers as told. */
export async function voiceReceiver(fn: (t: Turn, n: number) => TurnAnswer = () => ({ json: { text: 'Okay.' } })): Promise<VoiceReceiver> {
  const turns: Turn[] = [];
  let answerFn = fn;
  const sockets = new Set<Socket>();
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const t: Turn = { headers: req.headers, rawBody, body: JSON.parse(rawBody) };
      const n = turns.length;
      turns.push(t);
      const a = answerFn(t, n);
      if (a === 'hang') {
        open.add(res);
        return;
      }
      if ('status' in a) {
        res.writeHead(a.status).end();
        return;
      }
      if ('json' in a) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(a.json));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      open.add(res);
      let i = 0;
      const next = () => {
        if (i >= a.lines.length) {
          open.delete(res);
          res.end();
          return;
        }
        res.write(`${JSON.stringify(a.lines[i++])}\n`);
        setTimeout(next, a.delayMs ?? 0);
      };
      next();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/voice`,
    turns,
    answer: (f) => {
      answerFn = f;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Places a call and answers its record. */
export async function placeCall(app: TestApp, line: VoiceLine, body: Record<string, unknown>) {
  const r = await app.call('POST', '/v1/calls', { key: line.key, body: { agentId: line.agentId, ...body } });
  if (r.status !== 200) throw new Error(`call: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; status: string };
}

/** Waits until the call has ended and answers its record (with turns). */
export async function endedCall(app: TestApp, key: string, callId: string, timeoutS = 15): Promise<any> {
  // an inbound call is answered to the engine before the read models show it (docs/sandbox.md#voice): until
  // they do, the call is not found
  const shownBy = Date.now() + timeoutS * 1000;
  let r = await app.call('GET', `/v1/calls/${callId}?wait=true&timeout=${timeoutS}`, { key });
  while (r.status === 404 && Date.now() < shownBy) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    r = await app.call('GET', `/v1/calls/${callId}?wait=true&timeout=${timeoutS}`, { key });
  }
  if (r.status !== 200) throw new Error(`get call: ${r.status} ${JSON.stringify(r.body)}`);
  if (r.body.status === 'in-progress') throw new Error(`call ${callId} still in progress after ${timeoutS} s: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** The far end's view of a sandbox call (what it heard, digits, transfers). */
export async function farEnd(app: TestApp, callId: string): Promise<any> {
  const r = await app.call('GET', `/sandbox/calls/${callId}`, { key: ADMIN_TOKEN });
  if (r.status !== 200) throw new Error(`sandbox view: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function callWhen(app: TestApp, key: string, callId: string, done: (c: any) => boolean, what: string) {
  return eventually(async () => {
    const r = await app.call('GET', `/v1/calls/${callId}`, { key });
    return r.status === 200 && done(r.body) ? r.body : undefined;
  }, what);
}

/** Call settings as a placed call records them, for tests that write call events directly. */
export const callSettings = (o: Partial<CallSettings> = {}): CallSettings => ({
  mode: 'webhook',
  greeting: 'Hello, this is Acme.',
  voice: 'sandbox-aria',
  systemPrompt: null,
  modelTier: 'turbo',
  variables: {},
  unknownVariables: [],
  screeningIdentity: null,
  screeningPurpose: null,
  voicemailMessage: null,
  transferNumber: null,
  trunkTransfers: null,
  recording: false,
  enableBackchannel: false,
  interruptionSensitivity: 0.5,
  maxSilenceMs: 10_000,
  maxDurationSeconds: 600,
  metadata: null,
  ...o,
});

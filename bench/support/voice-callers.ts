import { performance } from 'node:perf_hooks';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { moduleThread } from '../../infrastructure/module-thread.js';
import { client, type Reply } from './http-client.js';

/*
 * The voice bench's driven callers, on a worker thread of their own (`npm run bench:voice`, docs/testing.md#voice-npm-run-benchvoice):
 * their requests (ring, say, wait for the reply to be spoken, hang up) are sent and read on this thread, not on the
 * main thread whose busy share and CPU the bench reports as the platform's (which serves them). The webhook's
 * receiver, on its own thread too, tells them through a port when it has answered a turn.
 */

export type AnswerKind = 'json' | 'ndjson';
/** One driven call: its id, the turns said, those the webhook never saw, and how long ringing it in took. */
export type Driven = { callId: string; turns: number; missing: number; setupMs: number };

/** What the callers are told: where the platform is, who they are, how long they pause after a reply and wait for one. */
export type CallersPlan = Readonly<{
  base: string;
  adminToken: string;
  phoneNumber: string;
  run: string;
  calls: number;
  turns: number;
  firstCaller: number;
  pauseMs: number;
  turnTimeoutMs: number;
  /** how many playbacks the agent speaks for an answer of each kind */
  spoken: Record<AnswerKind, { playbacks: number }>;
}>;

/** The i-th caller: +1 312 2XX XXXX, outside the 555 exchange, so never a persona (the caller is driven). */
const callerNumber = (i: number): string => `+1312${200 + Math.floor(i / 10000)}${String(i % 10000).padStart(4, '0')}`;

/**
 * Starts the callers' thread and resolves once it is loaded; `run()` then rings every call in at once and resolves
 * with each call's figures. `answers` is the receiver's side of a channel on which it posts `{ hit: { transcript } }`
 * for every turn it answered.
 */
export async function startCallers(plan: CallersPlan, answers: MessagePort): Promise<{ run: () => Promise<Driven[]> }> {
  const worker = moduleThread(import.meta.url, { workerData: { voiceCallers: plan, answers }, transferList: [answers] });
  const message = (want: 'ready' | 'done') =>
    new Promise<{ driven?: Driven[] }>((resolve, reject) => {
      const onMessage = (m: { ready?: true; driven?: Driven[]; error?: string }) => {
        if (m.error !== undefined) done(() => reject(new Error(`voice callers: ${m.error}`)));
        else if ((want === 'ready' && m.ready) || (want === 'done' && m.driven)) done(() => resolve(m));
      };
      const onError = (err: Error) => done(() => reject(err));
      const done = (then: () => void) => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        then();
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
    });
  await message('ready');
  return {
    run: async () => {
      const finished = message('done');
      worker.postMessage('go');
      try {
        return (await finished).driven ?? [];
      } finally {
        await worker.terminate();
      }
    },
  };
}

// ---------------------------------------------------------------- the thread

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** `p`'s value, or null when it has not settled within `ms` (the timer does not outlive it). */
const within = <T>(p: Promise<T>, ms: number): Promise<T | null> => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)))]).finally(() => clearTimeout(timer));
};
const ok = (what: string, r: Reply): any => {
  if (r.status < 200 || r.status > 299) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

/**
 * One inbound call from a driven caller: each turn is said once the agent's reply to the previous one has been
 * spoken and the pause more have passed (so no turn talks over the agent); then the caller hangs up.
 */
async function driveCall(
  p: CallersPlan,
  call: ReturnType<typeof client>['call'],
  /** resolves once the receiver has answered the turn whose transcript is `text` */
  answered: (text: string) => Promise<void>,
  ci: number,
): Promise<Driven> {
  const t = performance.now();
  const rung = ok(
    'inbound call',
    await call('POST', '/sandbox/calls/inbound', { key: p.adminToken, body: { from: callerNumber(ci), to: p.phoneNumber } }),
  ) as { callId: string };
  const setupMs = performance.now() - t;
  const callId = rung.callId;
  let playbacks = 0;
  let missing = 0;
  for (let k = 0; k < p.turns; k++) {
    const kind: AnswerKind = (ci + k) % 2 === 0 ? 'json' : 'ndjson';
    // the last word tells the receiver how to answer
    const text = `Bench ${p.run} call ${ci} turn ${k} ${kind}`;
    const hit = answered(text);
    ok('say', await call('POST', `/sandbox/calls/${callId}/say`, { key: p.adminToken, body: { text } }));
    if ((await within(hit, p.turnTimeoutMs)) === null) {
      missing++;
      continue;
    }
    playbacks += p.spoken[kind].playbacks;
    // the reply has been spoken to the end (the far end's view), so the next turn does not talk over it: one request,
    // answered by the sandbox once the agent is quiet (docs/sandbox.md#the-voice-sandbox-api-and-cli), then the pause
    const timeout = Math.max(1, Math.ceil(p.turnTimeoutMs / 1000));
    ok(
      'sandbox view',
      await call('GET', `/sandbox/calls/${callId}?agentQuietAfter=${playbacks}&timeout=${timeout}`, { key: p.adminToken }),
    );
    await sleep(p.pauseMs);
  }
  ok('hangup', await call('POST', `/sandbox/calls/${callId}/hangup`, { key: p.adminToken }));
  return { callId, turns: p.turns, missing, setupMs };
}

const data = workerData as { voiceCallers?: CallersPlan; answers?: MessagePort } | null;
if (parentPort && data?.voiceCallers && data.answers) {
  const port = parentPort;
  const plan = data.voiceCallers;
  const seen = new Set<string>();
  const waiting = new Map<string, () => void>();
  data.answers.on('message', (m: { hit?: { transcript: string } }) => {
    if (!m.hit) return;
    seen.add(m.hit.transcript);
    waiting.get(m.hit.transcript)?.();
    waiting.delete(m.hit.transcript);
  });
  const answered = (text: string) => (seen.has(text) ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(text, resolve)));
  const { call, close } = client(plan.base);
  port.once('message', () => {
    Promise.all(Array.from({ length: plan.calls }, (_, i) => driveCall(plan, call, answered, plan.firstCaller + i))).then(
      (driven) => {
        close();
        data.answers?.close();
        port.postMessage({ driven });
      },
      (err: unknown) => port.postMessage({ error: err instanceof Error ? err.message : String(err) }),
    );
  });
  port.postMessage({ ready: true });
}

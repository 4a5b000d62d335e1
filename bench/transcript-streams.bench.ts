/**
 * Open transcript streams against /healthz (docs/testing.md#benchmarks): an embedded server (PGlite in memory, the
 * sandbox voice engine) with BENCH_STREAMS (500) transcript streams open at once, BENCH_KEYS (25) API keys of one
 * live call each, 20 streams per key (TRANSCRIPT_STREAMS_PER_KEY). Prints /healthz latency while the streams open,
 * while they sit idle, and while every call records caller turns that every stream receives.
 *
 *   npm run bench:streams
 */
import { performance } from 'node:perf_hooks';
import { FAR_END, FAST_VOICE_ENV, voiceLine } from '../test/support/calls.js';
import { ADMIN_TOKEN, startTestApp } from '../test/support/http.js';
import { runBench } from './support/bench.js';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 500);
const KEYS = Number(process.env.BENCH_KEYS ?? 25);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
const fmt = (xs: number[]) =>
  `n=${xs.length} p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;

async function main() {
  const app = await startTestApp({ ...FAST_VOICE_ENV, TRANSCRIPT_STREAMS_PER_KEY: String(Math.ceil(STREAMS / KEYS)) });
  const healthz: Record<string, number[]> = { opening: [], idle: [], turns: [] };
  let phase: keyof typeof healthz | null | 'setup' = 'setup';
  const probe = (async () => {
    for (;;) {
      if (phase === null) return;
      if (phase === 'setup') {
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      const t = performance.now();
      await fetch(`${app.url}/healthz`).then((r) => r.arrayBuffer());
      healthz[phase]?.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const aborts: AbortController[] = [];
  let delivered = 0; // streams that received their first turn after the streams were open
  try {
    const calls: { key: string; id: string }[] = [];
    for (let k = 0; k < KEYS; k++) {
      const line = await voiceLine(app, { greeting: '' }, `Streams ${k}`);
      const c = await app.call('POST', '/v1/calls', { key: line.key, body: { agentId: line.agentId, toNumber: FAR_END.silent } });
      if (c.status !== 200) throw new Error(`call: ${c.status} ${JSON.stringify(c.body)}`);
      calls.push({ key: line.key, id: c.body.id });
    }
    phase = 'opening';
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: STREAMS }, async (_, i) => {
        const c = calls[i % KEYS]!;
        const abort = new AbortController();
        aborts.push(abort);
        // the agent greets nobody (no greeting): a stream's first turn is the caller's, said after all are open
        const res = await fetch(`${app.url}/v1/calls/${c.id}/transcript/stream`, {
          headers: { authorization: `Bearer ${c.key}` },
          signal: abort.signal,
        });
        if (res.status !== 200) throw new Error(`stream ${i}: ${res.status}`);
        void (async () => {
          const reader = res.body!.getReader();
          const dec = new TextDecoder();
          try {
            for (;;) {
              const { done, value } = await reader.read();
              if (done) return;
              if (phase === 'turns' && dec.decode(value).includes('event: turn')) {
                delivered++;
                return;
              }
            }
          } catch {
            // closed by the bench
          }
        })();
      }),
    );
    const opened = performance.now() - t0;
    phase = 'idle';
    await new Promise((r) => setTimeout(r, 3000));
    phase = 'turns';
    const t1 = performance.now();
    for (const c of calls) await app.call('POST', `/sandbox/calls/${c.id}/say`, { key: ADMIN_TOKEN, body: { text: 'hello there' } });
    while (delivered < STREAMS && performance.now() - t1 < 60_000) await new Promise((r) => setTimeout(r, 50));
    const turnsMs = performance.now() - t1;
    phase = null;
    await probe;
    console.log(`${STREAMS} transcript streams over ${KEYS} keys, embedded (PGlite in memory)`);
    console.log(
      `opened all in ${opened.toFixed(0)} ms; a caller turn on each of the ${KEYS} calls reached ${delivered} of ${STREAMS} streams in ${turnsMs.toFixed(0)} ms`,
    );
    for (const [name, xs] of Object.entries(healthz)) if (xs.length) console.log(`/healthz while ${name.padEnd(7)}: ${fmt(xs)}`);
  } finally {
    phase = null;
    for (const a of aborts) a.abort();
    await app.close();
  }
}

runBench(main);

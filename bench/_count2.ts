import { PGlite } from '@electric-sql/pglite';

const stats = new Map<string, { n: number; ms: number }>();
const orig = (PGlite.prototype as any).query;
let chain = Promise.resolve();
(PGlite.prototype as any).query = function (q: string, ...rest: unknown[]) {
  const k = q.replace(/\s+/g, ' ').slice(0, 80);
  // serialise here so the measured time is the statement's own, not the wait for the connection
  const run = chain.then(async () => {
    const t = performance.now();
    try {
      return await orig.call(this, q, ...rest);
    } finally {
      const s = stats.get(k) ?? { n: 0, ms: 0 };
      s.n++;
      s.ms += performance.now() - t;
      stats.set(k, s);
    }
  });
  chain = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
};
process.env.BENCH_EVENTS = '200';
process.env.BENCH_PACED = '1';
process.env.BENCH_SCENARIO_SECONDS = '60';
process.on('exit', () => {
  const total = [...stats.values()].reduce((a, b) => a + b.ms, 0);
  console.error('statement ms total', total.toFixed(0));
  for (const [k, s] of [...stats].sort((a, b) => b[1].ms - a[1].ms).slice(0, 20))
    console.error(s.ms.toFixed(0).padStart(7), String(s.n).padStart(5), (s.ms / s.n).toFixed(2).padStart(7), k);
});
await import('./webhooks.bench.js');

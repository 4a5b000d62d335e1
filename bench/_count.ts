import { PGlite } from '@electric-sql/pglite';

const counts = new Map<string, number>();
const orig = (PGlite.prototype as any).query;
(PGlite.prototype as any).query = function (q: string, ...rest: unknown[]) {
  const k = q.replace(/\s+/g, ' ').slice(0, 90);
  counts.set(k, (counts.get(k) ?? 0) + 1);
  return orig.call(this, q, ...rest);
};
process.env.BENCH_EVENTS = '200';
process.env.BENCH_PACED = '1';
process.env.BENCH_SCENARIO_SECONDS = '60';
const t = process.cpuUsage();
process.on('exit', () => {
  const c = process.cpuUsage(t);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  console.error('statements', total, 'cpu s', ((c.user + c.system) / 1e6).toFixed(1));
  for (const [k, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.error(String(n).padStart(6), k);
});
await import('./webhooks.bench.js');

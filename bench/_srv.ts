process.env.BENCH_EVENTS = process.env.BENCH_EVENTS ?? '1000';
await import('./webhooks.bench.js');

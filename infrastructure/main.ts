import type { Server } from 'node:http';
import { loadConfig } from './config/config.js';
import { createLogger } from './logger.js';
import { createRuntime, ensureDevAccount, listen } from './runtime.js';

/** Process entry point: `npm start`. ROLE=api|worker|all chooses what this process runs. */
async function main(): Promise<void> {
  const cfg = loadConfig();
  const log = createLogger(cfg.LOG_LEVEL);
  const rt = await createRuntime(cfg, log);
  const mode = cfg.EVENTSTORE_URL ? 'EventStoreDB events + PostgreSQL read models' : cfg.DATABASE_URL ? 'PostgreSQL server' : `embedded (PGlite in ${cfg.DATA_DIR})`;

  let server: Server | null = null;
  if (cfg.ROLE !== 'worker') {
    server = await listen(rt.app, cfg.PORT, cfg.HOST);
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : cfg.PORT;
    const base = cfg.PUBLIC_URL ?? `http://localhost:${port}`;
    const dev = await ensureDevAccount(rt);
    const lines = [`Agent platform listening on ${base} (${mode}, role ${cfg.ROLE})`, `API docs: ${base}/docs  (OpenAPI: ${base}/openapi.json)`];
    if (dev) lines.push(`Development account ${dev.accountId} created. API key (shown once, save it): ${dev.apiKey}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  } else {
    process.stdout.write(`Agent platform worker running (${mode})\n`);
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: draining requests, subscriptions and workers');
    const force = setTimeout(() => { log.error({}, 'shutdown timed out'); process.exit(1); }, cfg.SHUTDOWN_TIMEOUT_MS);
    force.unref();
    if (server) {
      await new Promise<void>((resolve) => { server!.close(() => resolve()); server!.closeIdleConnections(); });
    }
    await rt.close();
    log.info({}, 'stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});

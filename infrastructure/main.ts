import type { Server } from 'node:http';
import { loadConfig } from './config/config.js';
import { withLocalSecrets } from './config/local-secrets.js';
import { createLogger } from './logger.js';
import { createRuntime, ensureDevAccount, listen } from './runtime.js';

/** Process entry point: `npm start`. ROLE=api|worker|all chooses what this process runs. */
async function main(): Promise<void> {
  const local = withLocalSecrets(loadConfig());
  const cfg = local.cfg;
  const log = createLogger(cfg.LOG_LEVEL);
  if (local.secretsKeyFile && cfg.DATABASE_URL) {
    log.warn(
      { file: local.secretsKeyFile },
      'SECRETS_KEY is not set: using the key file in DATA_DIR; give every process of this deployment the same SECRETS_KEY',
    );
  }
  const rt = await createRuntime(cfg, log);
  const mode = cfg.EVENTSTORE_URL
    ? 'EventStoreDB events + PostgreSQL read models'
    : cfg.DATABASE_URL
      ? 'PostgreSQL server'
      : `embedded (PGlite in ${cfg.DATA_DIR})`;

  let server: Server | null = null;
  if (cfg.ROLE !== 'worker') {
    server = await listen(rt.app, cfg.PORT, cfg.HOST, rt.upgrades);
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : cfg.PORT;
    const base = cfg.PUBLIC_URL ?? `http://localhost:${port}`;
    const dev = await ensureDevAccount(rt);
    const lines = [
      `Agent platform listening on ${base} (${mode}, role ${cfg.ROLE})`,
      `API docs: ${base}/docs  (OpenAPI: ${base}/openapi.json)`,
      `Web call demo: ${base}/web-call  (talk to an agent in the browser)`,
      `Console: ${base}/console`,
    ];
    if (local.adminTokenCreated) lines.push(`Admin token (for /admin and /sandbox, kept in ${local.adminTokenFile}): ${cfg.ADMIN_TOKEN}`);
    else if (local.adminTokenFile) lines.push(`Admin token (for /admin and /sandbox): in ${local.adminTokenFile}`);
    else if (!cfg.ADMIN_TOKEN) lines.push('Admin and sandbox APIs disabled: set ADMIN_TOKEN to use them');
    // the key is shown once: last, so nothing printed at start pushes it out of sight (docs/operations.md#what-start-up-prints)
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
    const force = setTimeout(() => {
      log.error({}, 'shutdown timed out');
      process.exit(1);
    }, cfg.SHUTDOWN_TIMEOUT_MS);
    force.unref();
    if (server) {
      const closed = new Promise<void>((resolve) => {
        server!.close(() => resolve());
        server!.closeIdleConnections();
      });
      // live web calls hold their connections open: they end first (host_lost), then the server can close
      await Promise.all([closed, rt.upgrades.drain()]);
    }
    await rt.close();
    log.info({}, 'stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});

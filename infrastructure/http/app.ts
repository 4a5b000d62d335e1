import express, { Router, type Express } from 'express';
import swaggerUi from 'swagger-ui-express';
import client from 'prom-client';
import type { Container } from 'inversify';
import type { ApiKeySecretsPort } from '../../application/ports/api-key-secrets.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { AccountQueries } from '../../application/ports/queries.port.js';
import { Api } from './api.js';
import { errorMiddleware, sendError } from './errors.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { Config } from '../config/config.js';
import { accessLog, authenticate, FailureLimiter, requestId, throttle } from './middleware.js';
import { buildDocument, OpenAPIRegistry } from './openapi.js';
import { adminGuard } from './routes/admin.routes.js';
import { sandboxGuard } from './routes/sandbox-telecom.routes.js';
import { adminRouteModules, publicRoutes, v1Routes } from './routes/index.js';

export type AppDeps = Readonly<{
  log: LoggerPort;
  container: Container;
  publicUrl?: string | undefined;
  adminToken?: string | undefined;
  throttle: { maxRequests: number; windowSeconds: number };
  now: () => number;
  ready: () => Promise<{ ok: boolean; checks: Record<string, string> }>;
  secrets: ApiKeySecretsPort;
  accountQueries: AccountQueries;
}>;

export function buildApp(d: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  const cfg = d.container.isBound(TOKENS.Config) ? d.container.get<Config>(TOKENS.Config) : undefined;
  // forwarding headers count only from the proxies named in TRUST_PROXY (off by default): docs/security.md
  app.set('trust proxy', cfg?.TRUST_PROXY ?? false);
  app.use(requestId, accessLog(d.log), express.json({ limit: '1mb' }));

  const registry = new OpenAPIRegistry();

  // public: health, metrics, the API description
  app.get('/healthz', (_req, res) => { res.json({ status: 'ok' }); });
  app.get('/readyz', async (_req, res) => {
    const r = await d.ready().catch((err: unknown) => ({ ok: false, checks: { error: String(err) } }));
    res.status(r.ok ? 200 : 503).json({ status: r.ok ? 'ready' : 'not_ready', checks: r.checks });
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', client.register.contentType);
    res.send(await client.register.metrics());
  });

  // every /sandbox path needs the admin token, whichever module declares it
  app.use('/sandbox', sandboxGuard(d.adminToken));
  const open = Router();
  for (const m of publicRoutes) m(new Api(open, registry), d.container);
  app.use(open);

  // always mounted: without a token the guard refuses every request (docs/security.md)
  const admin = Router();
  admin.use('/admin', adminGuard(d.adminToken));
  for (const m of adminRouteModules) m(new Api(admin, registry), d.container);
  app.use(admin);

  const v1 = Router();
  const authFailures = new FailureLimiter({ maxFailures: cfg?.AUTH_FAILURES_PER_CLIENT ?? 20, windowSeconds: d.throttle.windowSeconds, now: d.now });
  v1.use('/v1', authenticate(d.accountQueries, d.secrets, () => new Date(d.now()), authFailures), throttle({ ...d.throttle, now: d.now }));
  for (const m of v1Routes) m(new Api(v1, registry), d.container);

  const document = buildDocument(registry, d.publicUrl);
  app.get('/openapi.json', (_req, res) => { res.json(document); });
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(document, { customSiteTitle: 'API docs' }));

  app.use(v1);

  app.use((_req, res) => { sendError(res, 'NOT_FOUND', 'No such endpoint'); });
  app.use(errorMiddleware(d.log));
  return app;
}

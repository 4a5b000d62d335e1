import express, { type Express, Router } from 'express';
import client from 'prom-client';
import swaggerUi from 'swagger-ui-express';
import type { AccountQueries } from '../../application/accounts/account-queries.port.js';
import type { ApiKeySecretsPort } from '../../application/accounts/api-key-secrets.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { Capability, Resolve } from '../capabilities/capability.js';
import { Api } from './api.js';
import { errorMiddleware, sendError, useErrorTable } from './errors.js';
import { adminGuard, sandboxGuard } from './guards.js';
import { accessLog, authenticate, FailureLimiter, requestId, throttle } from './middleware.js';
import { buildDocument, OpenAPIRegistry, routesOf } from './openapi.js';

/** HTTP methods in the order an `Allow` header lists them. */
const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

export type AppDeps = Readonly<{
  log: LoggerPort;
  /** the level of the per-request log line (docs/operations.md#logs) */
  accessLogLevel?: 'info' | 'debug';
  capabilities: readonly Capability[];
  resolve: Resolve;
  publicUrl?: string | undefined;
  adminToken?: string | undefined;
  throttle: { maxRequests: number; windowSeconds: number };
  /** express's `trust proxy`: which proxies' forwarding headers count (docs/security.md) */
  trustProxy: boolean | number | string | string[];
  /** failed authentications per client address per throttle window before 429 */
  authFailuresPerClient: number;
  now: () => number;
  ready: () => Promise<{ ok: boolean; checks: Record<string, string> }>;
  secrets: ApiKeySecretsPort;
  accountQueries: AccountQueries;
}>;

export function buildApp(d: AppDeps): Express {
  useErrorTable(Object.assign({}, ...d.capabilities.map((m) => m.errors ?? {})));
  const app = express();
  app.disable('x-powered-by');
  // forwarding headers count only from the proxies named in TRUST_PROXY (off by default): docs/security.md
  app.set('trust proxy', d.trustProxy);
  // the raw body stays beside the parsed one for callbacks signed over their exact bytes (docs/chatapp.md#receiving-from-the-real-platform)
  app.use(
    requestId,
    accessLog(d.log, d.accessLogLevel),
    express.json({
      limit: '1mb',
      verify: (req, _res, buf) => {
        (req as typeof req & { rawBody?: Buffer }).rawBody = buf;
      },
    }),
  );

  const registry = new OpenAPIRegistry();

  // public: health, metrics, the API description
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
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
  for (const m of d.capabilities) m.routes?.public?.(new Api(open, registry), d.resolve);
  app.use(open);

  // always mounted: without a token the guard refuses every request (docs/security.md)
  const admin = Router();
  admin.use('/admin', adminGuard(d.adminToken));
  for (const m of d.capabilities) m.routes?.admin?.(new Api(admin, registry), d.resolve);
  app.use(admin);

  const v1 = Router();
  const authFailures = new FailureLimiter({ maxFailures: d.authFailuresPerClient, windowSeconds: d.throttle.windowSeconds, now: d.now });
  // the API-key audience: /v1, and the public API's paths outside it (the recording add-on's /credits/recording…, the
  // chat-app integration's /integrations/…; the platform's own signed callback there is a public route, answered first)
  v1.use(
    ['/v1', '/credits', '/integrations'],
    authenticate(d.accountQueries, d.secrets, () => new Date(d.now()), authFailures),
    throttle({ ...d.throttle, now: d.now }),
  );
  for (const m of d.capabilities) m.routes?.v1?.(new Api(v1, registry), d.resolve);

  // the OpenAPI document is generated on its first request, not with every app (docs/api.md#the-api-description-openapijson-and-docs)
  let document: ReturnType<typeof buildDocument> | undefined;
  const documentOf = () => {
    document ??= buildDocument(registry, d.publicUrl);
    return document;
  };
  app.get('/openapi.json', (_req, res) => {
    res.json(documentOf());
  });
  // `/docs` answers the page itself (200, also for a plain `curl`), not a redirect to `/docs/`; the base element
  // makes the page's relative asset links resolve under /docs/ either way
  let docsPage: string | undefined;
  app.get(['/docs', '/docs/'], (_req, res) => {
    docsPage ??= swaggerUi.generateHTML(documentOf(), { customSiteTitle: 'API docs' }).replace('<head>', '<head>\n  <base href="/docs/">');
    res.type('html').send(docsPage);
  });
  app.use('/docs', swaggerUi.serve);

  app.use(v1);

  // a known path asked with a method it does not have is a 405 naming the methods it has (docs/api.md#methods)
  const known = routesOf(registry).map(({ path, method }) => ({
    pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    method: method.toUpperCase(),
  }));
  app.use((req, res) => {
    const methods = new Set(known.filter((k) => k.pattern.test(req.path)).map((k) => k.method));
    if (methods.has('GET')) methods.add('HEAD');
    const allowed = HTTP_METHODS.filter((m) => methods.has(m));
    if (allowed.length > 0 && !allowed.includes(req.method)) {
      res.setHeader('Allow', allowed.join(', '));
      sendError(res, 'METHOD_NOT_ALLOWED', `${req.method} is not a method of ${req.path}: it answers ${allowed.join(', ')}`);
      return;
    }
    sendError(res, 'NOT_FOUND', 'No such endpoint');
  });
  app.use(errorMiddleware(d.log));
  return app;
}

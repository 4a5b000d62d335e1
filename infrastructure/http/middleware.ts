import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import client from 'prom-client';
import type { AccountQueries } from '../../application/accounts/account-queries.port.js';
import type { ApiKeySecretsPort } from '../../application/accounts/api-key-secrets.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { RequestContext } from '../../application/shared/context.js';
import { DomainError } from '../../domain/shared/errors.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** `X-Request-Id` on every response: the caller's when it is sane, else a new one. */
export const requestId: RequestHandler = (req, res, next) => {
  const given = req.header('x-request-id');
  const id = given && REQUEST_ID.test(given) ? given : `req_${randomUUID().replace(/-/g, '')}`;
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};

export const httpDuration = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration by method, route and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});

/** One log line and one metric sample per request, labelled by the route pattern (never the raw path). */
export const accessLog =
  (log: LoggerPort, level: 'info' | 'debug' = 'info'): RequestHandler =>
  (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const route = (req.route?.path as string | undefined) ?? 'unmatched';
      httpDuration.observe({ method: req.method, route: `${req.baseUrl}${route}`, status: String(res.statusCode) }, seconds);
      log[level](
        {
          requestId: res.locals.requestId,
          method: req.method,
          path: req.originalUrl.split('?')[0],
          status: res.statusCode,
          ms: Math.round(seconds * 1000),
          accountId: (res.locals.ctx as RequestContext | undefined)?.accountId,
        },
        'request',
      );
    });
    next();
  };

/**
 * Bearer API key -> account; `X-Sub-Account-Id` narrows the request to a sub-account the key's account owns.
 * A sub-account id that is not ours is refused with 403 whether or not it exists.
 */
export const authenticate =
  (accounts: AccountQueries, secrets: ApiKeySecretsPort, now: () => Date, failures?: FailureLimiter): RequestHandler =>
  async (req, res, next) => {
    const client = `ip:${req.ip ?? 'unknown'}`;
    failures?.check(client);
    const refuse = (message: string): never => {
      failures?.record(client);
      throw new DomainError('UNAUTHORIZED', message);
    };
    const header = req.header('authorization') ?? '';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) refuse(header ? 'Invalid authorization header; expected: Bearer <API_KEY>' : 'Missing API key');
    const found = await accounts.keyWithAccount(secrets.hash(m![1]!));
    if (!found || found.key.revoked || found.account.status !== 'active') return refuse('Invalid API key');
    const { key, account } = found;
    let accountId = account.accountId;
    const sub = req.header('x-sub-account-id');
    if (sub !== undefined && sub !== '') {
      const target = await accounts.get(sub);
      if (!target || target.parentAccountId !== account.accountId || target.status !== 'active') {
        throw new DomainError('SUB_ACCOUNT_FORBIDDEN', 'This API key cannot act for that sub-account');
      }
      accountId = target.accountId;
    }
    const requestId = String(res.locals.requestId);
    const ctx: RequestContext = { accountId, requestId, correlationId: requestId, actor: `key:${key.keyId}` };
    res.locals.ctx = ctx;
    res.locals.keyId = key.keyId;
    await accounts.touchKey(key.keyId, now());
    next();
  };

/**
 * Failed authentications per client address in a fixed window (docs/security.md): once a client has failed
 * `maxFailures` times, every request of it answers 429 until the window ends, so keys cannot be guessed at
 * the speed of the network. In memory, per API process, like the endpoint throttle.
 */
export class FailureLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private lastSweep = 0;

  constructor(private readonly o: { maxFailures: number; windowSeconds: number; now: () => number }) {}

  private window(who: string, create: boolean): { start: number; count: number } | undefined {
    const now = this.o.now();
    const windowMs = this.o.windowSeconds * 1000;
    if (now - this.lastSweep > windowMs) {
      for (const [k, w] of this.windows) if (now - w.start >= windowMs) this.windows.delete(k);
      this.lastSweep = now;
    }
    let w = this.windows.get(who);
    if (w && now - w.start >= windowMs) {
      this.windows.delete(who);
      w = undefined;
    }
    if (!w && create) {
      w = { start: now, count: 0 };
      this.windows.set(who, w);
    }
    return w;
  }

  /** throws THROTTLED while `who` is over its failures */
  check(who: string): void {
    const w = this.window(who, false);
    if (w && w.count >= this.o.maxFailures) {
      const retryAfterSeconds = Math.max(1, Math.ceil((w.start + this.o.windowSeconds * 1000 - this.o.now()) / 1000));
      throw new DomainError('THROTTLED', `Too many failed authentications. Retry in ${retryAfterSeconds} seconds.`, undefined, {
        retryAfterSeconds,
      });
    }
  }

  record(who: string): void {
    this.window(who, true)!.count++;
  }
}

/**
 * Endpoint throttle: a fixed window per API key (or client address before auth). In memory, so each API
 * process enforces it for the traffic it sees; limits come from config.
 */
export const throttle = (o: { maxRequests: number; windowSeconds: number; now: () => number }): RequestHandler => {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = 0;
  return (req, res, next) => {
    const now = o.now();
    const windowMs = o.windowSeconds * 1000;
    if (now - lastSweep > windowMs) {
      for (const [k, w] of windows) if (now - w.start >= windowMs) windows.delete(k);
      lastSweep = now;
    }
    const who = (res.locals.keyId as string | undefined) ?? `ip:${req.ip ?? 'unknown'}`;
    let w = windows.get(who);
    if (!w || now - w.start >= windowMs) {
      w = { start: now, count: 0 };
      windows.set(who, w);
    }
    w.count++;
    if (w.count > o.maxRequests) {
      const retryAfterSeconds = Math.max(1, Math.ceil((w.start + windowMs - now) / 1000));
      throw new DomainError('THROTTLED', `Too many requests. Retry in ${retryAfterSeconds} seconds.`, undefined, { retryAfterSeconds });
    }
    next();
  };
};

import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { RequestContext } from '../../application/shared/context.js';
import { DomainError } from '../../domain/shared/errors.js';

const digest = (s: string) => createHash('sha256').update(s).digest();
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** Operator API, mounted only when ADMIN_TOKEN is set: `Authorization: Bearer <ADMIN_TOKEN>`. */
export const adminGuard = (token: string): RequestHandler => (req, res, next) => {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.header('authorization') ?? '');
  if (!m) throw new DomainError('UNAUTHORIZED', 'Missing admin token');
  if (!timingSafeEqual(digest(m[1]!), digest(token))) throw new DomainError('FORBIDDEN', 'Invalid admin token');
  const requestId = String(res.locals.requestId);
  res.locals.ctx = { accountId: 'admin', requestId, correlationId: requestId, actor: 'admin' } satisfies RequestContext;
  next();
};

/**
 * Who may drive the sandbox: with ADMIN_TOKEN set, `Authorization: Bearer <ADMIN_TOKEN>`; without it (a
 * developer's machine), only clients on the loopback interface. Faults affect every account of the process.
 */
export const sandboxGuard = (adminToken: string | undefined): RequestHandler => (req, _res, next) => {
  if (adminToken) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.header('authorization') ?? '');
    if (!m) throw new DomainError('UNAUTHORIZED', 'The sandbox control API needs the admin token');
    if (!timingSafeEqual(digest(m[1]!), digest(adminToken))) throw new DomainError('FORBIDDEN', 'Invalid admin token');
  } else if (!LOOPBACK.has(req.socket.remoteAddress ?? '')) {
    throw new DomainError('FORBIDDEN', 'Without ADMIN_TOKEN the sandbox control API answers loopback clients only');
  }
  next();
};

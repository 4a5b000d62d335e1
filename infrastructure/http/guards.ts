import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { RequestContext } from '../../application/shared/context.js';
import { DomainError } from '../../domain/shared/errors.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The operator check of /admin and /sandbox: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant
 * time. Without a configured token (a server database and no ADMIN_TOKEN) every request is refused: no
 * address, loopback included, is trusted instead (docs/security.md). The token's own digest is taken once, the
 * request's on each request.
 */
function operatorCheck(token: string | undefined, what: string): (req: Request) => void {
  const want = token ? digest(token) : null;
  return (req) => {
    if (!want) throw new DomainError('FORBIDDEN', `The ${what} is disabled: set ADMIN_TOKEN to use it`);
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.header('authorization') ?? '');
    if (!m) throw new DomainError('UNAUTHORIZED', `The ${what} needs the admin token`);
    if (!timingSafeEqual(digest(m[1]!), want)) throw new DomainError('FORBIDDEN', 'Invalid admin token');
  };
}

/** Operator API: `Authorization: Bearer <ADMIN_TOKEN>`; without a configured token it answers 403 to everyone. */
export const adminGuard = (token: string | undefined): RequestHandler => {
  const check = operatorCheck(token, 'admin API');
  return (req, res, next) => {
    check(req);
    const requestId = String(res.locals.requestId);
    res.locals.ctx = { accountId: 'admin', requestId, correlationId: requestId, actor: 'admin' } satisfies RequestContext;
    next();
  };
};

/**
 * Who may drive the sandbox: `Authorization: Bearer <ADMIN_TOKEN>` only (the embedded start generates one);
 * without a token it answers 403. Its outbox holds sign-up codes and its faults affect every account.
 */
export const sandboxGuard = (adminToken: string | undefined): RequestHandler => {
  const check = operatorCheck(adminToken, 'sandbox control API');
  return (req, _res, next) => {
    check(req);
    next();
  };
};

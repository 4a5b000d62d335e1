import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { DomainError } from '../../domain/shared/errors.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The operator check of /admin and /sandbox: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant
 * time. Without a configured token (a server database and no ADMIN_TOKEN) every request is refused: no
 * address, loopback included, is trusted instead (docs/security.md).
 */
export function requireOperator(req: Request, token: string | undefined, what: string): void {
  if (!token) throw new DomainError('FORBIDDEN', `The ${what} is disabled: set ADMIN_TOKEN to use it`);
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.header('authorization') ?? '');
  if (!m) throw new DomainError('UNAUTHORIZED', `The ${what} needs the admin token`);
  if (!timingSafeEqual(digest(m[1]!), digest(token))) throw new DomainError('FORBIDDEN', 'Invalid admin token');
}

import type { ErrorRequestHandler, Response } from 'express';
import { ZodError, type z } from 'zod';
import { WrongExpectedRevisionError } from '../../application/ports/event-store.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { isConnectionError } from '../db/connection-errors.js';
import { DomainError, type ErrorCode, type FieldError } from '../../domain/shared/errors.js';

/** How one error code answers over HTTP: the status, the body shape and the error `type` (docs/errors.md). */
export type HttpError = Readonly<{ status: number; shape: 'envelope' | 'plain'; type: string }>;
export type ErrorTable = Readonly<Partial<Record<ErrorCode, HttpError>>>;

/** Shorthands for capability modules' error tables. */
export const httpError = {
  notFound: { status: 404, shape: 'envelope', type: 'not_found' },
  conflict: { status: 409, shape: 'envelope', type: 'conflict_error' },
  plainConflict: { status: 409, shape: 'plain', type: 'conflict_error' },
  invalidRequest: { status: 400, shape: 'envelope', type: 'invalid_request_error' },
  rateLimited: { status: 429, shape: 'envelope', type: 'rate_limit_error' },
  unavailable: { status: 503, shape: 'envelope', type: 'api_error' },
  paymentRequired: { status: 402, shape: 'plain', type: 'payment_required' },
  upstream: { status: 502, shape: 'envelope', type: 'carrier_error' },
} as const satisfies Record<string, HttpError>;

/**
 * Where errors become HTTP. `envelope` errors answer `{error: {message, code, type, details}, request_id}`;
 * `plain` ones answer `{detail, request_id}` (401/403, throttles, 402, number-related 409). These are the codes
 * every capability shares; each capability module maps its own, and the capability list checks that every
 * code has a row.
 */
export const PLATFORM_ERRORS = {
  VALIDATION_ERROR: { status: 422, shape: 'envelope', type: 'validation_error' },
  UNAUTHORIZED: { status: 401, shape: 'plain', type: 'authentication_error' },
  FORBIDDEN: { status: 403, shape: 'plain', type: 'permission_error' },
  SUB_ACCOUNT_FORBIDDEN: { status: 403, shape: 'plain', type: 'permission_error' },
  NOT_FOUND: httpError.notFound,
  THROTTLED: { status: 429, shape: 'plain', type: 'rate_limit_error' },
  RATE_LIMITED: httpError.rateLimited,
  CONCURRENCY_CONFLICT: httpError.conflict,
  READ_MODEL_TIMEOUT: httpError.unavailable,
  SERVICE_UNAVAILABLE: httpError.unavailable,
  SMS_PROVIDER_ERROR: httpError.upstream,
  TELEPHONY_PROVIDER_ERROR: httpError.upstream,
  INTERNAL_ERROR: { status: 500, shape: 'envelope', type: 'api_error' },
} as const satisfies ErrorTable;

let table: ErrorTable = PLATFORM_ERRORS;

/** Installs the capabilities' error tables (once, when the app is built). */
export function useErrorTable(t: ErrorTable): void {
  table = { ...PLATFORM_ERRORS, ...t };
}

const httpOf = (code: ErrorCode): HttpError => table[code] ?? PLATFORM_ERRORS.INTERNAL_ERROR;

/** A request that failed validation at the edge; `loc` follows the public API (`["body", "name"]`). */
export class RequestValidationError extends Error {
  constructor(readonly items: readonly { loc: (string | number)[]; msg: string; type: string }[]) {
    super('Request validation failed');
    this.name = 'RequestValidationError';
  }
}

const zodType = (i: z.core.$ZodIssue): string => {
  switch (i.code) {
    case 'invalid_type': return /received undefined$/.test(i.message) ? 'missing' : `${i.expected}_type`;
    case 'invalid_value': return 'enum';
    case 'too_big': return i.origin === 'string' ? 'string_too_long' : i.origin === 'array' ? 'too_long' : 'less_than_equal';
    case 'too_small': return i.origin === 'string' ? 'string_too_short' : i.origin === 'array' ? 'too_short' : 'greater_than_equal';
    case 'invalid_format': return 'string_pattern_mismatch';
    case 'unrecognized_keys': return 'extra_forbidden';
    default: return 'value_error';
  }
};

export const fromZod = (source: 'body' | 'query' | 'path' | 'header', err: ZodError): RequestValidationError =>
  new RequestValidationError(err.issues.map((i) => ({
    loc: [source, ...i.path.map((p) => (typeof p === 'number' ? p : String(p)))],
    msg: i.message,
    type: zodType(i),
  })));

export function sendError(res: Response, code: ErrorCode, message: string, details?: readonly FieldError[], legacyDetail?: unknown[]): void {
  const { status, shape, type } = httpOf(code);
  const requestId = String(res.locals.requestId ?? '');
  if (shape === 'plain') {
    res.status(status).json({ detail: message, request_id: requestId });
    return;
  }
  const body: Record<string, unknown> = { error: { message, code, type, details: details ?? [] }, request_id: requestId };
  // 422 also carries the public API's `{detail: [{loc, msg, type}]}` so clients of either shape parse it
  if (code === 'VALIDATION_ERROR') {
    body.detail = legacyDetail ?? (details ?? []).map((d) => ({ loc: ['body', ...d.field.split('.').filter(Boolean)], msg: d.message, type: d.type }));
  }
  res.status(status).json(body);
}

type BodyParserError = Error & { type?: string; status?: number; body?: string };

export const errorMiddleware = (log: LoggerPort): ErrorRequestHandler => (err: unknown, _req, res, _next) => {
  if (res.headersSent) return;
  if (err instanceof RequestValidationError) {
    const details = err.items.map((i) => ({ field: i.loc.slice(1).join('.'), message: i.msg, type: i.type }));
    sendError(res, 'VALIDATION_ERROR', 'Request validation failed', details, err.items.map((i) => ({ ...i })));
    return;
  }
  if (err instanceof ZodError) {
    const e = fromZod('body', err);
    sendError(res, 'VALIDATION_ERROR', 'Request validation failed', e.items.map((i) => ({ field: i.loc.slice(1).join('.'), message: i.msg, type: i.type })), e.items.map((i) => ({ ...i })));
    return;
  }
  const bp = err as BodyParserError;
  if (bp?.type === 'entity.parse.failed') {
    const items = [{ loc: ['body', 0], msg: 'JSON decode error', type: 'json_invalid' }];
    sendError(res, 'VALIDATION_ERROR', 'Request body is not valid JSON', [{ field: '', message: 'JSON decode error', type: 'json_invalid' }], items);
    return;
  }
  if (bp?.type === 'entity.too.large') {
    res.status(413).json({ error: { message: 'Request body too large', code: 'VALIDATION_ERROR', type: 'validation_error', details: [] }, request_id: res.locals.requestId });
    return;
  }
  if (bp?.type === 'charset.unsupported' || bp?.type === 'encoding.unsupported') {
    sendError(res, 'VALIDATION_ERROR', bp.message, [{ field: '', message: bp.message, type: 'value_error' }]);
    return;
  }
  if (err instanceof DomainError) {
    if (err.code === 'THROTTLED' && typeof err.hints.retryAfterSeconds === 'number') res.setHeader('Retry-After', String(err.hints.retryAfterSeconds));
    sendError(res, err.code, err.message, err.details);
    return;
  }
  if (err instanceof WrongExpectedRevisionError) {
    sendError(res, 'CONCURRENCY_CONFLICT', 'The resource was changed by another request; retry');
    return;
  }
  if (isConnectionError(err)) {
    // the database or event store is unreachable: nothing was acknowledged, the client may retry
    log.warn({ err, requestId: res.locals.requestId }, 'storage unavailable');
    res.setHeader('Retry-After', '2');
    sendError(res, 'SERVICE_UNAVAILABLE', 'The service cannot reach its database right now; retry shortly');
    return;
  }
  log.error({ err, requestId: res.locals.requestId }, 'unhandled error');
  sendError(res, 'INTERNAL_ERROR', 'Internal error');
};

import type { ErrorRequestHandler, Response } from 'express';
import { ZodError, type z } from 'zod';
import { WrongExpectedRevisionError } from '../../application/ports/event-store.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { DomainError, type ErrorCode, type FieldError } from '../../domain/shared/errors.js';

/**
 * The one place where errors become HTTP (spec section 7). `envelope` errors answer
 * `{error: {message, code, type, details}, request_id}`; `plain` ones answer `{detail, request_id}`
 * (spec 7.1: 401/403, throttles, 402, number-related 409). The Record forces a row for every code.
 */
const HTTP: Record<ErrorCode, { status: number; shape: 'envelope' | 'plain'; type: string }> = {
  VALIDATION_ERROR: { status: 422, shape: 'envelope', type: 'validation_error' },
  BAD_REQUEST: { status: 400, shape: 'envelope', type: 'invalid_request_error' },
  UNAUTHORIZED: { status: 401, shape: 'plain', type: 'authentication_error' },
  FORBIDDEN: { status: 403, shape: 'plain', type: 'permission_error' },
  SUB_ACCOUNT_FORBIDDEN: { status: 403, shape: 'plain', type: 'permission_error' },
  NOT_FOUND: { status: 404, shape: 'envelope', type: 'not_found' },
  ACCOUNT_NOT_FOUND: { status: 404, shape: 'envelope', type: 'not_found' },
  AGENT_NOT_FOUND: { status: 404, shape: 'envelope', type: 'not_found' },
  API_KEY_NOT_FOUND: { status: 404, shape: 'envelope', type: 'not_found' },
  PHONE_NUMBER_NOT_FOUND: { status: 404, shape: 'envelope', type: 'not_found' },
  INSUFFICIENT_BALANCE: { status: 402, shape: 'plain', type: 'payment_required' },
  NUMBER_LIMIT_REACHED: { status: 409, shape: 'plain', type: 'conflict_error' },
  THROTTLED: { status: 429, shape: 'plain', type: 'rate_limit_error' },
  RATE_LIMITED: { status: 429, shape: 'envelope', type: 'rate_limit_error' },
  CONCURRENCY_CONFLICT: { status: 409, shape: 'envelope', type: 'conflict_error' },
  READ_MODEL_TIMEOUT: { status: 503, shape: 'envelope', type: 'api_error' },
  WEBHOOK_NOT_FOUND: { status: 404, shape: 'envelope', type: 'not_found' },
  SIGNUP_NOT_FOUND: { status: 404, shape: 'envelope', type: 'not_found' },
  SIGNUP_CODE_INVALID: { status: 400, shape: 'envelope', type: 'invalid_request_error' },
  SIGNUP_CODE_EXPIRED: { status: 400, shape: 'envelope', type: 'invalid_request_error' },
  SIGNUP_LOCKED: { status: 429, shape: 'envelope', type: 'rate_limit_error' },
  SIGNUP_FAILED: { status: 409, shape: 'envelope', type: 'conflict_error' },
  NUMBER_UNAVAILABLE: { status: 409, shape: 'plain', type: 'conflict_error' },
  PHONE_NUMBER_RELEASED: { status: 409, shape: 'envelope', type: 'conflict_error' },
  NUMBER_PROVISIONING_PENDING: { status: 503, shape: 'envelope', type: 'api_error' },
  SMS_PROVIDER_ERROR: { status: 502, shape: 'envelope', type: 'carrier_error' },
  TELEPHONY_PROVIDER_ERROR: { status: 502, shape: 'envelope', type: 'carrier_error' },
  SIP_TRUNK_NOT_FOUND: { status: 404, shape: 'envelope', type: 'not_found' },
  SIP_TRUNK_CONFLICT: { status: 409, shape: 'envelope', type: 'conflict_error' },
  INTERNAL_ERROR: { status: 500, shape: 'envelope', type: 'api_error' },
};

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
  const { status, shape, type } = HTTP[code];
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

type BodyParserError = Error & { type?: string; status?: number; body?: string; code?: string };

/** A client error raised before our code runs (router, body parser); it is answered as a 4xx, never a 500. */
function unreadableRequest(err: BodyParserError): { message: string; type: string } | null {
  // the router could not percent-decode a path segment (`/v1/agents/%E0%A4%A`)
  if (err instanceof URIError && err.status === 400) return { message: 'The request path is not valid percent-encoding', type: 'path_encoding' };
  // the body did not decompress with its Content-Encoding (zlib's Z_DATA_ERROR, Z_BUF_ERROR, ...)
  if (typeof err.code === 'string' && err.code.startsWith('Z_')) {
    return { message: 'The request body could not be decoded with its Content-Encoding', type: 'body_encoding' };
  }
  // anything else the body reader refused as the client's fault (aborted upload, wrong Content-Length)
  if (err.status === 400) return { message: 'The request body could not be read', type: 'body_unreadable' };
  return null;
}

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
  const unreadable = bp instanceof Error ? unreadableRequest(bp) : null;
  if (unreadable) {
    sendError(res, 'BAD_REQUEST', unreadable.message, [{ field: '', message: unreadable.message, type: unreadable.type }]);
    return;
  }
  log.error({ err, requestId: res.locals.requestId }, 'unhandled error');
  sendError(res, 'INTERNAL_ERROR', 'Internal error');
};

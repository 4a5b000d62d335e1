import type { ErrorRequestHandler, Response } from 'express';
import { ZodError, type z } from 'zod';
import { WrongExpectedRevisionError } from '../../application/ports/event-store.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { DomainError, type ErrorCode, type FieldError } from '../../domain/shared/errors.js';
import { isConnectionError } from '../db/connection-errors.js';

/**
 * How one error code answers over HTTP: the status, the body shape, the error `type`, and what the client should
 * do next (appended to the message, so that a client printing only `error.message` or `detail` still helps its
 * user: docs/compatibility.md; empty where the message says it already).
 */
export type HttpError = Readonly<{ status: number; shape: 'envelope' | 'plain'; type: string; fix?: string }>;
export type ErrorTable = Readonly<Partial<Record<ErrorCode, HttpError>>>;

/** Shorthands for capability modules' error tables. */
export const httpError = {
  notFound: { status: 404, shape: 'envelope', type: 'not_found' },
  conflict: { status: 409, shape: 'envelope', type: 'conflict_error' },
  plainConflict: { status: 409, shape: 'plain', type: 'conflict_error' },
  invalidRequest: { status: 400, shape: 'envelope', type: 'invalid_request_error' },
  unprocessable: { status: 422, shape: 'envelope', type: 'invalid_request_error' },
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
  VALIDATION_ERROR: { status: 422, shape: 'envelope', type: 'validation_error', fix: 'Fix the request and retry.' },
  BAD_REQUEST: {
    status: 400,
    shape: 'envelope',
    type: 'invalid_request_error',
    fix: 'Send the request again as valid, readable HTTP (check the path and the Content-Encoding).',
  },
  UNAUTHORIZED: {
    status: 401,
    shape: 'plain',
    type: 'authentication_error',
    fix: 'Send the header Authorization: Bearer <API_KEY> with a valid key of this server (the admin token on the admin and sandbox routes).',
  },
  FORBIDDEN: { status: 403, shape: 'plain', type: 'permission_error', fix: 'Use a key or token that is allowed to do this.' },
  SUB_ACCOUNT_FORBIDDEN: {
    status: 403,
    shape: 'plain',
    type: 'permission_error',
    fix: "Check the X-Sub-Account-Id header: it must name a sub-account of the key's account.",
  },
  NOT_FOUND: { ...httpError.notFound, fix: 'Check the method, the path and the id in it.' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    shape: 'envelope',
    type: 'invalid_request_error',
    fix: 'Use one of the methods the Allow header lists.',
  },
  THROTTLED: { status: 429, shape: 'plain', type: 'rate_limit_error' },
  RATE_LIMITED: { ...httpError.rateLimited, fix: 'Slow down and retry in a few seconds.' },
  CONCURRENCY_CONFLICT: { ...httpError.conflict, fix: 'Read the resource again and retry.' },
  READ_MODEL_TIMEOUT: httpError.unavailable,
  SERVICE_UNAVAILABLE: httpError.unavailable,
  SMS_PROVIDER_ERROR: { ...httpError.upstream, fix: 'The operation may have been done upstream: check its state before you retry.' },
  TELEPHONY_PROVIDER_ERROR: { ...httpError.upstream, fix: 'The operation may have been done upstream: check its state before you retry.' },
  INTERNAL_ERROR: { status: 500, shape: 'envelope', type: 'api_error', fix: 'Retry later; if it persists, report the request_id.' },
} as const satisfies ErrorTable;

let table: ErrorTable = PLATFORM_ERRORS;

/** Installs the capabilities' error tables (once, when the app is built). */
export function useErrorTable(t: ErrorTable): void {
  table = { ...PLATFORM_ERRORS, ...t };
}

const httpOf = (code: ErrorCode): HttpError => table[code] ?? PLATFORM_ERRORS.INTERNAL_ERROR;

/** One failed field of a request: `loc` follows the public API (`["body", "name"]`); `input` is what was sent, for the message. */
export type ValidationItem = { loc: (string | number)[]; msg: string; type: string; input?: unknown };

/** A request that failed validation at the edge. */
export class RequestValidationError extends Error {
  constructor(readonly items: readonly ValidationItem[]) {
    super(validationMessage(items));
    this.name = 'RequestValidationError';
  }
}

const sentence = (s: string) => (/[.!?]$/.test(s.trim()) ? s.trim() : `${s.trim()}.`);

/** `"12"`, `42`, `{"a":1}`: what was sent, short enough to print. */
const preview = (v: unknown): string => {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = typeof v;
  }
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
};

const describe = (i: ValidationItem) =>
  `${i.loc.join('.')}: ${i.msg.replace(/[.\s]+$/, '')}${i.type !== 'missing' && i.input !== undefined ? ` (got ${preview(i.input)})` : ''}`;

const fixOf = (items: readonly ValidationItem[]) => {
  if (items.length !== 1) return 'Fix these fields and retry.';
  const t = items[0]!.type;
  return t === 'missing'
    ? 'Add the field and retry.'
    : t === 'extra_forbidden'
      ? 'Remove or rename the field and retry.'
      : 'Fix the field and retry.';
};

/**
 * The one sentence a 422 built from field failures shows as `error.message`: every field (up to three),
 * what is wrong with it, what was sent, and the fix, e.g.
 * `body.areaCode: must be a three-digit area code (got "12"). Fix the field and retry.`
 */
export function validationMessage(items: readonly ValidationItem[]): string {
  if (!items.length) return 'The request is not valid. Fix it and retry.';
  const shown = items.slice(0, 3).map(describe).join('; ');
  const more = items.length > 3 ? `; and ${items.length - 3} more` : '';
  return `${items.length > 1 ? `${items.length} fields are not valid: ` : ''}${shown}${more}. ${fixOf(items)}`;
}

/** Any other error's message as a complete sentence with its fix. */
function withFix(code: ErrorCode, message: string, details?: readonly FieldError[]): string {
  if (code === 'VALIDATION_ERROR' && details?.length) {
    const fields = [...new Set(details.map((d) => d.field).filter(Boolean))];
    if (fields.length) return `${sentence(message)} Fix ${fields.join(', ')} and retry.`;
  }
  const fix = httpOf(code).fix;
  return fix ? `${sentence(message)} ${fix}` : sentence(message);
}

const zodType = (i: z.core.$ZodIssue): string => {
  switch (i.code) {
    case 'invalid_type':
      return ('input' in i ? i.input === undefined : /received undefined$/.test(i.message)) ? 'missing' : `${i.expected}_type`;
    case 'invalid_value':
      return 'enum';
    case 'too_big':
      return i.origin === 'string' ? 'string_too_long' : i.origin === 'array' ? 'too_long' : 'less_than_equal';
    case 'too_small':
      return i.origin === 'string' ? 'string_too_short' : i.origin === 'array' ? 'too_short' : 'greater_than_equal';
    case 'invalid_format':
      return 'string_pattern_mismatch';
    case 'unrecognized_keys':
      return 'extra_forbidden';
    default:
      return 'value_error';
  }
};

/** zod issues as validation items; an unknown-keys issue becomes one item per key, so `loc` names each field. */
export const fromZod = (source: 'body' | 'query' | 'path' | 'header', err: ZodError): RequestValidationError =>
  new RequestValidationError(
    err.issues.flatMap((i): ValidationItem[] => {
      const loc = [source, ...i.path.map((p) => (typeof p === 'number' ? p : String(p)))];
      if (i.code === 'unrecognized_keys') {
        return i.keys.map((k) => ({
          loc: [...loc, k],
          msg: 'is not a field of this request',
          type: 'extra_forbidden',
          input: (i.input as Record<string, unknown> | undefined)?.[k],
        }));
      }
      return [{ loc, msg: i.message, type: zodType(i), ...('input' in i ? { input: i.input } : {}) }];
    }),
  );

export function sendError(
  res: Response,
  code: ErrorCode,
  rawMessage: string,
  details?: readonly FieldError[],
  legacyDetail?: unknown[],
  composed = false,
): void {
  const { status, shape, type } = httpOf(code);
  const message = composed ? rawMessage : withFix(code, rawMessage, details);
  const requestId = String(res.locals.requestId ?? '');
  if (shape === 'plain') {
    res.status(status).json({ detail: message, request_id: requestId });
    return;
  }
  // Beside the envelope, `detail` as the public API's clients read it (docs/compatibility.md#error-bodies): on every
  // 422 the list `[{loc, msg, type}]` its description gives each 422 (for a refusal that is no field's fault, one
  // item naming the request and the code), on every other status the message as a string.
  const detail =
    status === 422
      ? (legacyDetail ??
        (details?.length
          ? details.map((d) => ({ loc: ['body', ...d.field.split('.').filter(Boolean)], msg: d.message, type: d.type }))
          : [{ loc: ['body'], msg: message, type: code.toLowerCase() }]))
      : message;
  const body = { error: { message, code, type, details: details ?? [] }, detail, request_id: requestId };
  res.status(status).json(body);
}

type BodyParserError = Error & { type?: string; status?: number; body?: string; code?: string };

/** A client error raised before our code runs (router, body parser); it is answered as a 4xx, never a 500. */
function unreadableRequest(err: BodyParserError): { message: string; type: string } | null {
  // the router could not percent-decode a path segment (`/v1/agents/%E0%A4%A`)
  if (err instanceof URIError && err.status === 400)
    return { message: 'The request path is not valid percent-encoding', type: 'path_encoding' };
  // the body did not decompress with its Content-Encoding (zlib's Z_DATA_ERROR, Z_BUF_ERROR, ...)
  if (typeof err.code === 'string' && err.code.startsWith('Z_')) {
    return { message: 'The request body could not be decoded with its Content-Encoding', type: 'body_encoding' };
  }
  // anything else the body reader refused as the client's fault (aborted upload, wrong Content-Length)
  if (err.status === 400) return { message: 'The request body could not be read', type: 'body_unreadable' };
  return null;
}

export const errorMiddleware =
  (log: LoggerPort): ErrorRequestHandler =>
  (err: unknown, _req, res, _next) => {
    if (res.headersSent) return;
    if (err instanceof RequestValidationError || err instanceof ZodError) {
      const e = err instanceof ZodError ? fromZod('body', err) : err;
      const details = e.items.map((i) => ({ field: i.loc.slice(1).join('.'), message: i.msg, type: i.type }));
      sendError(
        res,
        'VALIDATION_ERROR',
        e.message,
        details,
        e.items.map((i) => ({ loc: i.loc, msg: i.msg, type: i.type })),
        true,
      );
      return;
    }
    const bp = err as BodyParserError;
    if (bp?.type === 'entity.parse.failed') {
      const items = [{ loc: ['body', 0], msg: 'JSON decode error', type: 'json_invalid' }];
      const message = 'The request body is not valid JSON. Send one JSON object with Content-Type: application/json and retry.';
      sendError(res, 'VALIDATION_ERROR', message, [{ field: '', message: 'JSON decode error', type: 'json_invalid' }], items, true);
      return;
    }
    // a body, or a form with more fields, than the route reads
    if (bp?.type === 'entity.too.large' || bp?.type === 'parameters.too.many') {
      const message = 'The request body is larger than this server accepts. Send a smaller body and retry.';
      res.status(413).json({
        error: { message, code: 'VALIDATION_ERROR', type: 'validation_error', details: [] },
        detail: message,
        request_id: res.locals.requestId,
      });
      return;
    }
    if (bp?.type === 'charset.unsupported' || bp?.type === 'encoding.unsupported') {
      sendError(
        res,
        'VALIDATION_ERROR',
        `${sentence(bp.message)} Send the body as UTF-8 JSON without content encoding and retry.`,
        [{ field: '', message: bp.message, type: 'value_error' }],
        undefined,
        true,
      );
      return;
    }
    if (err instanceof DomainError) {
      if (err.code === 'THROTTLED' && typeof err.hints.retryAfterSeconds === 'number')
        res.setHeader('Retry-After', String(err.hints.retryAfterSeconds));
      sendError(res, err.code, err.message, err.details);
      return;
    }
    if (err instanceof WrongExpectedRevisionError) {
      sendError(res, 'CONCURRENCY_CONFLICT', 'The resource was changed by another request at the same time');
      return;
    }
    if (isConnectionError(err)) {
      // the database or event store is unreachable: nothing was acknowledged, the client may retry
      log.warn({ err, requestId: res.locals.requestId }, 'storage unavailable');
      res.setHeader('Retry-After', '2');
      sendError(res, 'SERVICE_UNAVAILABLE', 'The service cannot reach its database right now; retry shortly');
      return;
    }
    const unreadable = bp instanceof Error ? unreadableRequest(bp) : null;
    if (unreadable) {
      sendError(res, 'BAD_REQUEST', unreadable.message, [{ field: '', message: unreadable.message, type: unreadable.type }]);
      return;
    }
    log.error({ err, requestId: res.locals.requestId }, 'unhandled error');
    sendError(res, 'INTERNAL_ERROR', 'The server failed to handle this request');
  };

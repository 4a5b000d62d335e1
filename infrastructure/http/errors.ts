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

/** One failed field of a request: `loc` follows the public API (`["body", "name"]`); `input` is what was sent, for the message. */
export type ValidationItem = { loc: (string | number)[]; msg: string; type: string; input?: unknown };

/** A request that failed validation at the edge. */
export class RequestValidationError extends Error {
  constructor(readonly items: readonly ValidationItem[]) {
    super(validationMessage(items));
    this.name = 'RequestValidationError';
  }
}

/**
 * What each error tells the client to do next, appended to its message so that a client that prints only
 * `error.message` (or a plain `detail`) still helps its user (docs/compatibility.md). Empty where the message
 * already says it. Validation errors compose their own (validationMessage).
 */
const FIX: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'Fix the request and retry.',
  UNAUTHORIZED: 'Send the header Authorization: Bearer <API_KEY> with a valid key of this server (the admin token on the admin and sandbox routes).',
  FORBIDDEN: 'Use a key or token that is allowed to do this.',
  SUB_ACCOUNT_FORBIDDEN: 'Check the X-Sub-Account-Id header: it must name a sub-account of the key\'s account.',
  NOT_FOUND: 'Check the method, the path and the id in it.',
  ACCOUNT_NOT_FOUND: 'Check the account id.',
  AGENT_NOT_FOUND: 'Check the agent id: GET /v1/agents lists the agents of this account.',
  API_KEY_NOT_FOUND: 'Check the key id.',
  PHONE_NUMBER_NOT_FOUND: 'Check the number id: GET /v1/numbers lists the numbers of this account.',
  INSUFFICIENT_BALANCE: 'Add credit to the account and retry.',
  NUMBER_LIMIT_REACHED: 'Release a number you no longer need, or ask for a higher limit.',
  THROTTLED: '',
  RATE_LIMITED: 'Slow down and retry in a few seconds.',
  CONCURRENCY_CONFLICT: 'Read the resource again and retry.',
  READ_MODEL_TIMEOUT: '',
  WEBHOOK_NOT_FOUND: 'Configure one first with POST /v1/webhooks or POST /v1/agents/{agent_id}/webhook.',
  SIGNUP_NOT_FOUND: 'Check verification_id, or start again with POST /v0/agent/sign-up.',
  SIGNUP_CODE_INVALID: 'Check otp_code against the e-mail and retry.',
  SIGNUP_CODE_EXPIRED: '',
  SIGNUP_LOCKED: '',
  SIGNUP_FAILED: 'Start again with POST /v0/agent/sign-up.',
  NUMBER_UNAVAILABLE: 'Try another areaCode, or omit it to take any number of the country.',
  PHONE_NUMBER_RELEASED: '',
  NUMBER_PROVISIONING_PENDING: '',
  SMS_PROVIDER_ERROR: 'The operation may have been done upstream: check its state before you retry.',
  TELEPHONY_PROVIDER_ERROR: 'The operation may have been done upstream: check its state before you retry.',
  SIP_TRUNK_NOT_FOUND: 'Check the trunk id: GET /v1/sip-trunks lists the trunks of this account.',
  SIP_TRUNK_CONFLICT: '',
  INTERNAL_ERROR: 'Retry later; if it persists, report the request_id.',
};

const sentence = (s: string) => (/[.!?]$/.test(s.trim()) ? s.trim() : `${s.trim()}.`);

/** `"12"`, `42`, `{"a":1}`: what was sent, short enough to print. */
const preview = (v: unknown): string => {
  let s: string;
  try { s = JSON.stringify(v) ?? String(v); } catch { s = typeof v; }
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
};

const describe = (i: ValidationItem) =>
  `${i.loc.join('.')}: ${i.msg.replace(/[.\s]+$/, '')}${i.type !== 'missing' && i.input !== undefined ? ` (got ${preview(i.input)})` : ''}`;

const fixOf = (items: readonly ValidationItem[]) => {
  if (items.length !== 1) return 'Fix these fields and retry.';
  const t = items[0]!.type;
  return t === 'missing' ? 'Add the field and retry.' : t === 'extra_forbidden' ? 'Remove or rename the field and retry.' : 'Fix the field and retry.';
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
  const fix = FIX[code];
  return fix ? `${sentence(message)} ${fix}` : sentence(message);
}

const zodType = (i: z.core.$ZodIssue): string => {
  switch (i.code) {
    case 'invalid_type': return ('input' in i ? i.input === undefined : /received undefined$/.test(i.message)) ? 'missing' : `${i.expected}_type`;
    case 'invalid_value': return 'enum';
    case 'too_big': return i.origin === 'string' ? 'string_too_long' : i.origin === 'array' ? 'too_long' : 'less_than_equal';
    case 'too_small': return i.origin === 'string' ? 'string_too_short' : i.origin === 'array' ? 'too_short' : 'greater_than_equal';
    case 'invalid_format': return 'string_pattern_mismatch';
    case 'unrecognized_keys': return 'extra_forbidden';
    default: return 'value_error';
  }
};

/** zod issues as validation items; an unknown-keys issue becomes one item per key, so `loc` names each field. */
export const fromZod = (source: 'body' | 'query' | 'path' | 'header', err: ZodError): RequestValidationError =>
  new RequestValidationError(err.issues.flatMap((i): ValidationItem[] => {
    const loc = [source, ...i.path.map((p) => (typeof p === 'number' ? p : String(p)))];
    if (i.code === 'unrecognized_keys') {
      return i.keys.map((k) => ({ loc: [...loc, k], msg: 'is not a field of this request', type: 'extra_forbidden', input: (i.input as Record<string, unknown> | undefined)?.[k] }));
    }
    return [{ loc, msg: i.message, type: zodType(i), ...('input' in i ? { input: i.input } : {}) }];
  }));

export function sendError(res: Response, code: ErrorCode, rawMessage: string, details?: readonly FieldError[], legacyDetail?: unknown[], composed = false): void {
  const { status, shape, type } = HTTP[code];
  const message = composed ? rawMessage : withFix(code, rawMessage, details);
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
  if (err instanceof RequestValidationError || err instanceof ZodError) {
    const e = err instanceof ZodError ? fromZod('body', err) : err;
    const details = e.items.map((i) => ({ field: i.loc.slice(1).join('.'), message: i.msg, type: i.type }));
    sendError(res, 'VALIDATION_ERROR', e.message, details, e.items.map((i) => ({ loc: i.loc, msg: i.msg, type: i.type })), true);
    return;
  }
  const bp = err as BodyParserError;
  if (bp?.type === 'entity.parse.failed') {
    const items = [{ loc: ['body', 0], msg: 'JSON decode error', type: 'json_invalid' }];
    const message = 'The request body is not valid JSON. Send one JSON object with Content-Type: application/json and retry.';
    sendError(res, 'VALIDATION_ERROR', message, [{ field: '', message: 'JSON decode error', type: 'json_invalid' }], items, true);
    return;
  }
  if (bp?.type === 'entity.too.large') {
    res.status(413).json({ error: { message: 'The request body is larger than this server accepts. Send a smaller body and retry.', code: 'VALIDATION_ERROR', type: 'validation_error', details: [] }, request_id: res.locals.requestId });
    return;
  }
  if (bp?.type === 'charset.unsupported' || bp?.type === 'encoding.unsupported') {
    sendError(res, 'VALIDATION_ERROR', `${sentence(bp.message)} Send the body as UTF-8 JSON without content encoding and retry.`, [{ field: '', message: bp.message, type: 'value_error' }], undefined, true);
    return;
  }
  if (err instanceof DomainError) {
    if (err.code === 'THROTTLED' && typeof err.hints.retryAfterSeconds === 'number') res.setHeader('Retry-After', String(err.hints.retryAfterSeconds));
    sendError(res, err.code, err.message, err.details);
    return;
  }
  if (err instanceof WrongExpectedRevisionError) {
    sendError(res, 'CONCURRENCY_CONFLICT', 'The resource was changed by another request at the same time');
    return;
  }
  log.error({ err, requestId: res.locals.requestId }, 'unhandled error');
  sendError(res, 'INTERNAL_ERROR', 'The server failed to handle this request');
};

/**
 * Stable error codes (spec section 7). Every code has exactly one HTTP mapping in
 * infrastructure/http/errors.ts; adding a code here without a mapping fails the type check.
 */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  /** a request the server cannot even read: malformed percent-encoding, a body that does not decode */
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'ACCOUNT_NOT_FOUND'
  | 'AGENT_NOT_FOUND'
  | 'API_KEY_NOT_FOUND'
  | 'PHONE_NUMBER_NOT_FOUND'
  | 'SUB_ACCOUNT_FORBIDDEN'
  | 'INSUFFICIENT_BALANCE'
  | 'NUMBER_LIMIT_REACHED'
  | 'THROTTLED'
  | 'RATE_LIMITED'
  | 'CONCURRENCY_CONFLICT'
  | 'READ_MODEL_TIMEOUT'
  | 'WEBHOOK_NOT_FOUND'
  | 'SIGNUP_NOT_FOUND'
  | 'SIGNUP_CODE_INVALID'
  | 'SIGNUP_CODE_EXPIRED'
  | 'SIGNUP_LOCKED'
  | 'SIGNUP_FAILED'
  | 'NUMBER_UNAVAILABLE'
  | 'PHONE_NUMBER_RELEASED'
  | 'NUMBER_PROVISIONING_PENDING'
  | 'SMS_PROVIDER_ERROR'
  | 'TELEPHONY_PROVIDER_ERROR'
  | 'SIP_TRUNK_NOT_FOUND'
  | 'SIP_TRUNK_CONFLICT'
  | 'INTERNAL_ERROR';

export type FieldError = Readonly<{ field: string; message: string; type: string }>;

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string = code,
    readonly details?: readonly FieldError[],
    /** Extra facts for the edge (e.g. retryAfterSeconds); never shown verbatim. */
    readonly hints: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/**
 * Stable error codes (docs/errors.md). The codes every capability may use are declared here; a capability
 * declares its own beside its domain (e.g. domain/phone-number/errors.ts) by adding to `ErrorCodes`, and its
 * module maps them to HTTP. The capability list fails the type check while any code has no HTTP mapping.
 */
export interface ErrorCodes {
  VALIDATION_ERROR: true;
  /** a request the server cannot even read: malformed percent-encoding, a body that does not decode */
  BAD_REQUEST: true;
  UNAUTHORIZED: true;
  FORBIDDEN: true;
  SUB_ACCOUNT_FORBIDDEN: true;
  NOT_FOUND: true;
  /** a known path asked with a method it does not have */
  METHOD_NOT_ALLOWED: true;
  THROTTLED: true;
  RATE_LIMITED: true;
  CONCURRENCY_CONFLICT: true;
  READ_MODEL_TIMEOUT: true;
  /** the database (or the event store) cannot be reached right now */
  SERVICE_UNAVAILABLE: true;
  /** an upstream messaging provider (carrier) failed */
  SMS_PROVIDER_ERROR: true;
  /** an upstream telephony provider (numbers, SIP) failed */
  TELEPHONY_PROVIDER_ERROR: true;
  INTERNAL_ERROR: true;
}

export type ErrorCode = keyof ErrorCodes & string;

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

/** Error codes of self-service sign-up (docs/errors.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    SIGNUP_NOT_FOUND: true;
    SIGNUP_CODE_INVALID: true;
    SIGNUP_CODE_EXPIRED: true;
    SIGNUP_LOCKED: true;
    SIGNUP_FAILED: true;
    EMAIL_NOT_CONFIGURED: true;
  }
}
export type SignUpErrorCode =
  | 'SIGNUP_NOT_FOUND'
  | 'SIGNUP_CODE_INVALID'
  | 'SIGNUP_CODE_EXPIRED'
  | 'SIGNUP_LOCKED'
  | 'SIGNUP_FAILED'
  | 'EMAIL_NOT_CONFIGURED';

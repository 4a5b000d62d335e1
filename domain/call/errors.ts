/** Error codes of voice calls (docs/calls.md#errors, docs/errors.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    CALL_NOT_FOUND: true;
    /** a write to a call that has already ended (the session that held it hangs up) */
    CALL_NOT_LIVE: true;
    /** outbound calls over the account's (or sub-account's) concurrency cap: 429, plain, no Retry-After */
    CALL_CONCURRENCY_LIMIT: true;
    /** the number is at its limit of live calls: 409, plain */
    NUMBER_CALL_LIMIT: true;
    RECORDING_NOT_FOUND: true;
    /** a web call's access token that is unknown, expired or already used (docs/calls.md#joining-a-web-call) */
    WEB_CALL_TOKEN_INVALID: true;
    /** an API key with its limit of open transcript streams (docs/limits.md): 429, plain */
    TRANSCRIPT_STREAM_LIMIT: true;
  }
}
export type CallErrorCode =
  | 'CALL_NOT_FOUND'
  | 'CALL_NOT_LIVE'
  | 'CALL_CONCURRENCY_LIMIT'
  | 'NUMBER_CALL_LIMIT'
  | 'RECORDING_NOT_FOUND'
  | 'WEB_CALL_TOKEN_INVALID'
  | 'TRANSCRIPT_STREAM_LIMIT';

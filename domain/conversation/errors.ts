/** Error codes of text messaging (docs/messaging.md#caps, docs/errors.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    CONVERSATION_NOT_FOUND: true;
    MESSAGE_NOT_FOUND: true;
    CONVERSATION_AWAITING_REPLY: true;
    CONVERSATION_STREAK_LIMIT: true;
    CONVERSATION_INACTIVE: true;
    OUTBOUND_LIMIT_REACHED: true;
    NEW_CONVERSATION_LIMIT_REACHED: true;
    INBOUND_ONLY: true;
    /** the same Idempotency-Key with another request body */
    IDEMPOTENCY_KEY_REUSED: true;
    /** the same Idempotency-Key while its first request is still being answered */
    IDEMPOTENCY_KEY_IN_USE: true;
    MESSAGE_PROVIDER_ERROR: true;
  }
}
export type MessagingErrorCode =
  | 'CONVERSATION_NOT_FOUND'
  | 'MESSAGE_NOT_FOUND'
  | 'CONVERSATION_AWAITING_REPLY'
  | 'CONVERSATION_STREAK_LIMIT'
  | 'CONVERSATION_INACTIVE'
  | 'OUTBOUND_LIMIT_REACHED'
  | 'NEW_CONVERSATION_LIMIT_REACHED'
  | 'INBOUND_ONLY'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENCY_KEY_IN_USE'
  | 'MESSAGE_PROVIDER_ERROR';

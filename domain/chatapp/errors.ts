/** Error codes of the chat-application channel (docs/chatapp.md#errors, docs/errors.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    /** the account switched the chat-application channel off (on by default) */
    CHATAPP_NOT_ENABLED: true;
    CHATAPP_CONNECTION_NOT_FOUND: true;
    CHATAPP_NUMBER_NOT_FOUND: true;
    CHATAPP_TEMPLATE_NOT_FOUND: true;
    /** a platform number bound by another connection or account */
    CHATAPP_NUMBER_IN_USE: true;
    /** a template of that name and language exists on the connection and is not rejected */
    CHATAPP_TEMPLATE_EXISTS: true;
    /** a template send naming a template still in review, or rejected */
    CHATAPP_TEMPLATE_NOT_APPROVED: true;
    /** binding or creating a template on a connection that is not active (the platform refused its token, or is checking it) */
    CHATAPP_PLATFORM_REFUSED: true;
    /** a send the platform's rules refuse, decided here: 131047 (window closed) or 100 (variables) in the message */
    CHATAPP_SEND_REFUSED: true;
  }
}
export type ChatappErrorCode =
  | 'CHATAPP_NOT_ENABLED'
  | 'CHATAPP_CONNECTION_NOT_FOUND'
  | 'CHATAPP_NUMBER_NOT_FOUND'
  | 'CHATAPP_TEMPLATE_NOT_FOUND'
  | 'CHATAPP_NUMBER_IN_USE'
  | 'CHATAPP_TEMPLATE_EXISTS'
  | 'CHATAPP_TEMPLATE_NOT_APPROVED'
  | 'CHATAPP_PLATFORM_REFUSED'
  | 'CHATAPP_SEND_REFUSED';

/** Error codes of webhooks (docs/errors.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    WEBHOOK_NOT_FOUND: true;
  }
}
export type WebhookErrorCode = 'WEBHOOK_NOT_FOUND';

/** Error codes of webhooks (docs/errors.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    WEBHOOK_NOT_FOUND: true;
    WEBHOOK_DELIVERY_NOT_FOUND: true;
    WEBHOOK_DELIVERY_PENDING: true;
    WEBHOOK_NOT_SENDABLE: true;
  }
}
export type WebhookErrorCode = 'WEBHOOK_NOT_FOUND' | 'WEBHOOK_DELIVERY_NOT_FOUND' | 'WEBHOOK_DELIVERY_PENDING' | 'WEBHOOK_NOT_SENDABLE';

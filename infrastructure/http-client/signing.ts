import { createHmac } from 'node:crypto';

/**
 * The signing contract (docs/webhooks.md#verifying-signatures): `X-Webhook-Signature` is `sha256=` followed by the lowercase
 * hex HMAC-SHA256 of `${timestamp}.${rawBody}`, keyed with the UTF-8 bytes of the webhook secret;
 * `X-Webhook-Timestamp` is Unix time in whole seconds.
 */
export const signature = (secret: string, timestamp: number | string, rawBody: string | Uint8Array): string => {
  const h = createHmac('sha256', Buffer.from(secret, 'utf8'));
  h.update(`${timestamp}.`, 'utf8');
  h.update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody);
  return `sha256=${h.digest('hex')}`;
};

/** The headers of one delivery attempt, for the exact body bytes that go on the wire. */
export function webhookHeaders(o: { secret: string; webhookId: string; timestamp: number; body: Uint8Array }): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'agent-platform-webhooks/0.1',
    'x-webhook-id': o.webhookId,
    'x-webhook-timestamp': String(o.timestamp),
    'x-webhook-signature': signature(o.secret, o.timestamp, o.body),
  };
}

/**
 * Verifies a webhook delivery on the receiving side. Self-contained (node:crypto only), so a receiver can
 * import it from here or copy the file:
 *
 *   import { verifyWebhookSignature } from './infrastructure/webhooks/verify.ts';
 *   app.post('/hook', express.raw({ type: 'application/json' }), (req, res) => {
 *     if (!verifyWebhookSignature(process.env.WEBHOOK_SECRET!, req.headers, req.body)) return res.sendStatus(401);
 *     res.sendStatus(200); // answer fast, work later; dedupe on X-Webhook-ID (retries repeat an event)
 *   });
 *
 * Checks: both headers present; the timestamp is whole Unix seconds within `toleranceSeconds` of now
 * (either direction); the signature equals `sha256=` + hex HMAC-SHA256(secret, `${timestamp}.${rawBody}`),
 * compared in constant time. `rawBody` must be the bytes received, before any JSON parsing.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type WebhookHeaders = { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: WebhookHeaders, name: string): string | null {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name);
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : record[key];
  return v === undefined ? null : typeof v === 'string' ? v : (v[0] ?? null);
}

export function verifyWebhookSignature(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  toleranceSeconds = 300,
  nowSeconds: number = Date.now() / 1000,
): boolean {
  const ts = header(headers, 'x-webhook-timestamp');
  const sig = header(headers, 'x-webhook-signature');
  if (!ts || !sig || !/^\d{1,12}$/.test(ts)) return false;
  if (Math.abs(nowSeconds - Number(ts)) > toleranceSeconds) return false;
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${ts}.`, 'utf8').update(body).digest('hex')}`,
    'utf8',
  );
  const given = Buffer.from(sig.trim().toLowerCase(), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

import { validateRequest } from 'twilio/lib/webhooks/webhooks.js';
import { DomainError } from '../../../domain/shared/errors.js';

/**
 * Twilio's request signature (docs/carriers.md#callbacks): `X-Twilio-Signature` is the base64 HMAC-SHA1, keyed by the
 * account's auth token, of the URL Twilio requested followed by the POST parameters sorted by name. The URL is the
 * one the platform gave Twilio: PUBLIC_URL and the path and query this request arrived with (a proxy in front may
 * strip a path prefix PUBLIC_URL carries). Checked with the official `twilio` package's `validateRequest`, which
 * also accepts the URL with or without its default port, as Twilio may sign either.
 */
export function assertTwilioSignature(
  o: { authToken: string; publicUrl: string },
  req: { originalUrl: string; signature: string | undefined; params: Readonly<Record<string, unknown>> },
): void {
  if (!req.signature) throw new DomainError('FORBIDDEN', 'The request has no X-Twilio-Signature');
  const url = `${o.publicUrl}${req.originalUrl}`;
  if (!validateRequest(o.authToken, req.signature, url, { ...req.params }))
    throw new DomainError('FORBIDDEN', `X-Twilio-Signature does not sign this request to ${url} with TWILIO_AUTH_TOKEN`);
}

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ClockPort } from '../../application/ports/clock.port.js';

/**
 * Signed recording URLs (docs/calls.md#recordings): `GET /v1/calls/{id}/recording` answers without an API key
 * (the public SDK sends none), so the URL itself is the credential. It names the call and an expiry in Unix
 * seconds, and carries the hex HMAC-SHA256 of both under the `recordingUrls` key derived from SECRETS_KEY
 * (docs/security.md): a URL cannot be made for another call or kept past its expiry.
 */
export class RecordingUrls {
  constructor(
    private readonly key: Buffer,
    private readonly clock: ClockPort,
    private readonly o: Readonly<{ ttlSeconds: number; publicUrl?: string | undefined }>,
  ) {}

  signature(callId: string, expires: number): string {
    return createHmac('sha256', this.key).update(`recording.${callId}.${expires}`).digest('hex');
  }

  /** The call's recording URL, valid for the configured time: under PUBLIC_URL, else under `requestBase`. */
  url(callId: string, requestBase: string): string {
    const expires = Math.floor(this.clock.now().getTime() / 1000) + this.o.ttlSeconds;
    const base = (this.o.publicUrl ?? requestBase).replace(/\/+$/, '');
    return `${base}/v1/calls/${encodeURIComponent(callId)}/recording?expires=${expires}&signature=${this.signature(callId, expires)}`;
  }

  /** Whether the query of a recording request is a signature of this call that has not expired. */
  verify(callId: string, expires: string | undefined, signature: string | undefined): boolean {
    if (expires === undefined || signature === undefined || !/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return false;
    const at = Number(expires);
    if (at * 1000 < this.clock.now().getTime()) return false;
    return timingSafeEqual(Buffer.from(this.signature(callId, at), 'hex'), Buffer.from(signature, 'hex'));
  }
}

import { TelephonyError } from '../../../application/calls/voice-engine.port.js';
import { PERSONA_NUMBERS } from './magic.js';
import { E164 } from './timing.js';

/**
 * Where a transfer may go: an E.164 number or a SIP URI; the provider-error magic number refuses it
 * (docs/sandbox.md#voice). Throws the TelephonyError the platform sees.
 */
export function checkTransferTarget(to: string): void {
  if (!E164.test(to) && !/^sips?:\S+$/i.test(to))
    throw new TelephonyError(`Cannot transfer to ${JSON.stringify(to)}: not an E.164 number or a SIP URI`, false);
  if (PERSONA_NUMBERS[to]?.persona === 'provider-error')
    throw new TelephonyError(`Telephony provider error: the transfer to ${to} was refused`, true);
}

/** What the simulated SIP origination of a bridge meets, and after how long. */
export type BridgeOutcome = Readonly<{
  /** how long the answer takes: none (the URI is refused before anything is sent), a reply pause, or the ring time */
  after: 'none' | 'reply' | 'ring';
  /** the final SIP response when the URI does not answer; null when it answers */
  refusal: Readonly<{ status: number; reason: string }> | null;
}>;

/**
 * A bridge to `sipUri` (docs/sandbox.md#voice): anything but a `sip:`/`sips:` URI is refused at once (416); a host
 * starting with `fail` answers 503 after a reply pause; a host containing `unreachable` times out (408) after the
 * ring time; a host starting with `busy` answers 486 after the ring time; any other host answers after the ring time.
 * The platform then applies the same failover rule as to a live SIP trunk (domain/sip-trunk/routing.ts).
 */
export function bridgeOutcome(sipUri: string): BridgeOutcome {
  const host = /^sips?:(?:[^@\s]*@)?([^;:>?\s]+)/i.exec(sipUri)?.[1]?.toLowerCase();
  if (!host) return { after: 'none', refusal: { status: 416, reason: 'Unsupported URI Scheme' } };
  if (host.startsWith('fail')) return { after: 'reply', refusal: { status: 503, reason: 'Service Unavailable' } };
  // an endpoint that never answers: the INVITE times out after it would have rung
  if (host.includes('unreachable')) return { after: 'ring', refusal: { status: 408, reason: 'Request Timeout' } };
  if (host.startsWith('busy')) return { after: 'ring', refusal: { status: 486, reason: 'Busy Here' } };
  return { after: 'ring', refusal: null };
}

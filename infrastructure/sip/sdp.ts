import { parse, write } from 'sdp-transform';
import type { Codec, RemoteMedia } from './rtp-session.js';
import { STATIC_PAYLOAD } from './rtp-session.js';

/** the payload type this engine offers for telephone-event */
export const OUR_DTMF_PAYLOAD = 101;

/**
 * What a far end's SDP says about its audio (docs/sip.md#media): the first G.711 codec it lists (its preference,
 * unless it also lists `prefer`),
 * its telephone-event payload type, where its RTP goes and whether it holds the call; null when it offers no audio
 * this engine can take (answered 488).
 */
export function readRemoteSdp(sdp: string, prefer?: Codec): RemoteMedia | null {
  let s: ReturnType<typeof parse>;
  try {
    s = parse(sdp);
  } catch {
    return null;
  }
  const m = s.media?.find((x) => x.type === 'audio' && x.port > 0 && /RTP\/AVP/.test(x.protocol));
  if (!m) return null;
  const address = m.connection?.ip ?? s.connection?.ip;
  if (!address) return null;
  const payloads = String(m.payloads ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
  const names = new Map<number, string>();
  for (const r of m.rtp ?? []) names.set(r.payload, `${r.codec}/${r.rate}`.toUpperCase());
  // the far end's first G.711 codec, or `prefer` when it offers that one too (a re-INVITE keeps the call's codec)
  const g711: { codec: Codec; payloadType: number }[] = [];
  for (const pt of payloads) {
    const name = names.get(pt) ?? (pt === 0 ? 'PCMU/8000' : pt === 8 ? 'PCMA/8000' : '');
    if (name === 'PCMU/8000' || name === 'PCMA/8000') g711.push({ codec: name.slice(0, 4) as Codec, payloadType: pt });
  }
  const chosen = g711.find((c) => c.codec === prefer) ?? g711[0];
  if (!chosen) return null;
  const { codec, payloadType } = chosen;
  const dtmf = payloads.find((pt) => names.get(pt) === 'TELEPHONE-EVENT/8000') ?? null;
  const direction = m.direction ?? s.direction ?? 'sendrecv';
  // an address of 0.0.0.0 is the old way of holding a call (RFC 3264 §8.4)
  const held = address === '0.0.0.0';
  return {
    address,
    port: m.port,
    codec,
    payloadType,
    dtmfPayloadType: dtmf,
    sending: !held && (direction === 'sendrecv' || direction === 'sendonly'),
    receiving: !held && (direction === 'sendrecv' || direction === 'recvonly'),
  };
}

/** This engine's SDP: an answer (one codec, the one chosen) or an offer (PCMU and PCMA), with telephone-event. */
export function writeSdp(o: {
  address: string;
  port: number;
  sessionId: number;
  version: number;
  codecs: readonly { codec: Codec; payloadType: number }[];
  dtmfPayloadType: number | null;
  direction: 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';
}): string {
  const ip = o.address.includes(':') ? 6 : 4;
  const payloads = [...o.codecs.map((c) => c.payloadType), ...(o.dtmfPayloadType !== null ? [o.dtmfPayloadType] : [])];
  return write({
    version: 0,
    origin: { username: '-', sessionId: o.sessionId, sessionVersion: o.version, netType: 'IN', ipVer: ip, address: o.address },
    name: '-',
    connection: { version: ip, ip: o.address },
    timing: { start: 0, stop: 0 },
    media: [
      {
        type: 'audio',
        port: o.port,
        protocol: 'RTP/AVP',
        payloads: payloads.join(' '),
        rtp: [
          ...o.codecs.map((c) => ({ payload: c.payloadType, codec: c.codec, rate: 8000 })),
          ...(o.dtmfPayloadType !== null ? [{ payload: o.dtmfPayloadType, codec: 'telephone-event', rate: 8000 }] : []),
        ],
        fmtp: o.dtmfPayloadType !== null ? [{ payload: o.dtmfPayloadType, config: '0-16' }] : [],
        ptime: 20,
        direction: o.direction,
      },
    ],
  });
}

export const OFFERED_CODECS = [
  { codec: 'PCMU' as const, payloadType: STATIC_PAYLOAD.PCMU },
  { codec: 'PCMA' as const, payloadType: STATIC_PAYLOAD.PCMA },
];

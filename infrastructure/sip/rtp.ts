/**
 * RTP packets (RFC 3550 §5.1) and telephone events (RFC 4733 §2.3), as bytes (docs/sip.md#media). A packet is a
 * 12-byte header (version 2, padding, extension, CSRC count, marker, payload type, sequence number, timestamp,
 * SSRC), the CSRC list and an optional header extension, then the payload and optional padding.
 */
export type RtpPacket = Readonly<{
  payloadType: number;
  sequence: number;
  timestamp: number;
  ssrc: number;
  marker: boolean;
  payload: Buffer;
}>;

const HEADER = 12;

/** The packet in `buf`, or null when it is no RTP version 2 packet (too short, bad lengths, RTCP). */
export function parseRtp(buf: Buffer): RtpPacket | null {
  if (buf.length < HEADER) return null;
  const b0 = buf[0]!;
  if (b0 >> 6 !== 2) return null;
  const padding = (b0 & 0x20) !== 0;
  const extension = (b0 & 0x10) !== 0;
  const csrcCount = b0 & 0x0f;
  const b1 = buf[1]!;
  const payloadType = b1 & 0x7f;
  // RTCP shares the port with rtcp-mux: its packet types 200-204 read as payload types 72-76 with the marker set
  if (payloadType >= 72 && payloadType <= 76) return null;
  let offset = HEADER + 4 * csrcCount;
  if (extension) {
    if (buf.length < offset + 4) return null;
    offset += 4 + 4 * buf.readUInt16BE(offset + 2);
  }
  let end = buf.length;
  if (padding) {
    const pad = buf[buf.length - 1]!;
    if (pad === 0) return null;
    end -= pad;
  }
  if (end < offset) return null;
  return {
    payloadType,
    marker: (b1 & 0x80) !== 0,
    sequence: buf.readUInt16BE(2),
    timestamp: buf.readUInt32BE(4),
    ssrc: buf.readUInt32BE(8),
    payload: buf.subarray(offset, end),
  };
}

/** A packet's bytes: no padding, extension or CSRCs. */
export function buildRtp(p: RtpPacket): Buffer {
  const buf = Buffer.allocUnsafe(HEADER + p.payload.length);
  buf[0] = 0x80;
  buf[1] = (p.marker ? 0x80 : 0) | (p.payloadType & 0x7f);
  buf.writeUInt16BE(p.sequence & 0xffff, 2);
  buf.writeUInt32BE(p.timestamp >>> 0, 4);
  buf.writeUInt32BE(p.ssrc >>> 0, 8);
  p.payload.copy(buf, HEADER);
  return buf;
}

/** An RFC 4733 telephone event: the event code, whether this packet ends it, its volume (-dBm0) and duration (timestamp units). */
export type TelephoneEvent = Readonly<{ event: number; end: boolean; volume: number; duration: number }>;

export function parseTelephoneEvent(payload: Buffer): TelephoneEvent | null {
  if (payload.length < 4) return null;
  return { event: payload[0]!, end: (payload[1]! & 0x80) !== 0, volume: payload[1]! & 0x3f, duration: payload.readUInt16BE(2) };
}

export function buildTelephoneEvent(e: TelephoneEvent): Buffer {
  const buf = Buffer.allocUnsafe(4);
  buf[0] = e.event & 0xff;
  buf[1] = (e.end ? 0x80 : 0) | (e.volume & 0x3f);
  buf.writeUInt16BE(Math.min(0xffff, e.duration), 2);
  return buf;
}

/** RFC 4733 §3.2: events 0-9 are the digits, 10 `*`, 11 `#`, 12-15 `A`-`D`. */
const DIGITS = '0123456789*#ABCD';

export const digitOfEvent = (event: number): string | null => DIGITS[event] ?? null;

export function eventOfDigit(digit: string): number | null {
  const i = DIGITS.indexOf(digit.toUpperCase());
  return i < 0 ? null : i;
}

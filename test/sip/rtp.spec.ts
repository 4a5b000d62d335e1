import { expect } from 'chai';
import { buildRtp, buildTelephoneEvent, digitOfEvent, eventOfDigit, parseRtp, parseTelephoneEvent } from '../../infrastructure/sip/rtp.js';

/** RTP packets (RFC 3550 §5.1) and telephone events (RFC 4733 §2.3) as bytes (docs/sip.md#media). */
describe('RTP packets and RFC 4733 telephone events', () => {
  const payload = Buffer.from([1, 2, 3, 4, 5]);

  it('writes the 12-byte header of RFC 3550 and reads it back', () => {
    const p = { payloadType: 8, sequence: 65535, timestamp: 0xfffffff0, ssrc: 0xdeadbeef, marker: true, payload };
    const bytes = buildRtp(p);
    expect([...bytes.subarray(0, 12)]).to.deep.equal([0x80, 0x88, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0, 0xde, 0xad, 0xbe, 0xef]);
    expect(parseRtp(bytes)).to.deep.equal(p);
  });

  it('skips CSRCs, a header extension and padding', () => {
    const header = Buffer.from([0x80 | 0x20 | 0x10 | 2, 0, 0, 7, 0, 0, 0, 160, 0, 0, 0, 1]);
    const csrcs = Buffer.alloc(8, 9);
    const extension = Buffer.from([0xbe, 0xde, 0, 1, 0xaa, 0xbb, 0xcc, 0xdd]);
    const padding = Buffer.from([0, 0, 3]);
    const p = parseRtp(Buffer.concat([header, csrcs, extension, payload, padding]));
    expect(p).to.include({ payloadType: 0, sequence: 7, timestamp: 160, ssrc: 1, marker: false });
    expect([...p!.payload]).to.deep.equal([...payload]);
  });

  it('refuses what is no RTP: too short, another version, RTCP, lengths that do not fit', () => {
    expect(parseRtp(Buffer.alloc(11, 0x80))).to.equal(null);
    expect(parseRtp(Buffer.from([0x40, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1]))).to.equal(null);
    // a receiver report (packet type 201) reads as payload type 73 with the marker set
    expect(parseRtp(Buffer.from([0x81, 201, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0]))).to.equal(null);
    expect(parseRtp(Buffer.from([0x8f, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2]))).to.equal(null);
    expect(parseRtp(Buffer.from([0x90, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xbe, 0xde, 0, 9]))).to.equal(null);
    expect(parseRtp(Buffer.from([0xa0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]))).to.equal(null);
    expect(parseRtp(Buffer.from([0xa0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 9]))).to.equal(null);
  });

  it('writes and reads telephone events: event, end bit, volume, duration', () => {
    const e = { event: 11, end: true, volume: 10, duration: 800 };
    const bytes = buildTelephoneEvent(e);
    expect([...bytes]).to.deep.equal([11, 0x80 | 10, 0x03, 0x20]);
    expect(parseTelephoneEvent(bytes)).to.deep.equal(e);
    expect(parseTelephoneEvent(Buffer.from([1, 2, 3]))).to.equal(null);
    // a duration too long for 16 bits is cut at the largest
    expect(parseTelephoneEvent(buildTelephoneEvent({ event: 1, end: false, volume: 63, duration: 100_000 }))?.duration).to.equal(0xffff);
  });

  it('maps the keypad to RFC 4733 events 0-15 and back', () => {
    expect([...'0123456789*#ABCD'].map(eventOfDigit)).to.deep.equal([...Array(16).keys()]);
    expect(eventOfDigit('a')).to.equal(12);
    expect(eventOfDigit('x')).to.equal(null);
    expect([0, 9, 10, 11, 15, 16].map(digitOfEvent)).to.deep.equal(['0', '9', '*', '#', 'D', null]);
  });
});

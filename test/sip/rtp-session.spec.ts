import { createSocket, type Socket } from 'node:dgram';
import alawmulaw from 'alawmulaw';
import { expect } from 'chai';
import { createLogger } from '../../infrastructure/logger.js';
import { buildRtp, buildTelephoneEvent, parseRtp, parseTelephoneEvent, type RtpPacket } from '../../infrastructure/sip/rtp.js';
import { RtpClock } from '../../infrastructure/sip/rtp-clock.js';
import { type RemoteMedia, RtpPorts, RtpSession } from '../../infrastructure/sip/rtp-session.js';
import { eventually } from '../support/numbers.js';

/**
 * One call's RTP stream (docs/sip.md#media) against a far end made of a plain UDP socket: the agent's audio paced on
 * the packet clock and reported sent, keypad tones both ways as RFC 4733 events, reordered packets put back in
 * order, symmetric RTP, and a call on hold.
 */
describe('An RTP session against a UDP far end', function () {
  this.timeout(30_000);
  const log = createLogger('silent');
  const clock = new RtpClock();
  const ports = new RtpPorts(42_000 + 2 * Math.floor(Math.random() * 2000), 47_998);
  let far: Socket;
  let farPort: number;
  let heard: RtpPacket[];
  let session: RtpSession;

  const media = (o: Partial<RemoteMedia> = {}): RemoteMedia => ({
    address: '127.0.0.1',
    port: farPort,
    codec: 'PCMU',
    payloadType: 0,
    dtmfPayloadType: 101,
    sending: true,
    receiving: true,
    ...o,
  });
  /** a packet from the far end to the session */
  const sendToSession = (p: Partial<RtpPacket>, from = far) =>
    new Promise<void>((resolve) =>
      from.send(
        buildRtp({ payloadType: 0, sequence: 1, timestamp: 0, ssrc: 7, marker: false, payload: Buffer.alloc(160, 0xff), ...p }),
        session.port,
        '127.0.0.1',
        () => resolve(),
      ),
    );

  beforeEach(async () => {
    heard = [];
    far = createSocket('udp4');
    await new Promise<void>((r) => far.bind(0, '127.0.0.1', () => r()));
    farPort = far.address().port;
    far.on('message', (m) => {
      const p = parseRtp(m);
      if (p) heard.push(p);
    });
    session = new RtpSession(await ports.bind('127.0.0.1'), clock, log, 'call_test', []);
  });
  afterEach(() => {
    session.close();
    far.close();
  });

  it('sends queued audio 20 ms a packet, as G.711, in sequence, and says when its last sample went out', async () => {
    session.setRemote(media());
    const tone = Int16Array.from({ length: 8 * 250 }, (_, i) => Math.round(8000 * Math.sin(i / 3)));
    let sent = false;
    const part = session.enqueue(tone, () => {
      sent = true;
    });
    await eventually(async () => sent || undefined, 'the part reported sent');
    expect(part.sentSamples).to.equal(tone.length);
    const audioHeard = () => heard.filter((p) => p.payload.some((b) => b !== 0xff));
    // the last packet was sent; the far socket hears it on a later turn of the event loop (on a busy machine, later)
    await eventually(async () => audioHeard().length >= 13 || undefined, 'the last packet heard', 5000).catch(() => undefined);
    const audio = audioHeard();
    // 250 ms: 12 full packets and one padded
    expect(audio).to.have.length(13);
    for (let i = 1; i < audio.length; i++) {
      expect(audio[i]!.sequence).to.equal((audio[i - 1]!.sequence + 1) & 0xffff);
      expect(audio[i]!.timestamp).to.equal((audio[i - 1]!.timestamp + 160) >>> 0);
    }
    expect(audio[0]!.marker, 'a talkspurt starts with the marker').to.equal(true);
    const decoded = Int16Array.from(audio.flatMap((p) => [...alawmulaw.mulaw.decode(p.payload)]).slice(0, tone.length));
    const back = alawmulaw.mulaw.decode(alawmulaw.mulaw.encode(tone));
    expect([...decoded]).to.deep.equal([...back]);
  });

  it('drops what is queued when cleared, and never reports it sent', async () => {
    session.setRemote(media());
    let sent = false;
    session.enqueue(new Int16Array(8 * 2000).fill(3000), () => {
      sent = true;
    });
    await eventually(async () => heard.length > 3 || undefined, 'the first packets');
    session.clear();
    const before = heard.length;
    await eventually(async () => heard.length > before + 5 || undefined, 'more packets');
    expect(heard.slice(before + 2).every((p) => p.payload.every((b) => b === 0xff))).to.equal(true);
    expect(sent).to.equal(false);
  });

  it('sends keypad tones as RFC 4733 events: one timestamp per tone, the end three times', async () => {
    session.setRemote(media());
    await session.sendDigits('1#');
    await eventually(async () => heard.filter((p) => p.payloadType === 101).length >= 16 || undefined, 'two tones');
    const events = heard
      .filter((p) => p.payloadType === 101)
      .map((p) => ({ ...parseTelephoneEvent(p.payload)!, ts: p.timestamp, m: p.marker }));
    const tones = [...new Set(events.map((e) => e.ts))];
    expect(tones).to.have.length(2);
    const first = events.filter((e) => e.ts === tones[0]);
    expect(first.map((e) => [e.event, e.end, e.duration])).to.deep.equal([
      [1, false, 160],
      [1, false, 320],
      [1, false, 480],
      [1, false, 640],
      [1, false, 800],
      [1, true, 800],
      [1, true, 800],
      [1, true, 800],
    ]);
    expect(first.map((e) => e.m)).to.deep.equal([true, false, false, false, false, false, false, false]);
    expect(events.filter((e) => e.ts === tones[1]).every((e) => e.event === 11)).to.equal(true);
  });

  it('refuses to send tones to a far end that takes no telephone-event', async () => {
    session.setRemote(media({ dtmfPayloadType: null }));
    let error: unknown = null;
    await session.sendDigits('1').catch((e: unknown) => {
      error = e;
    });
    expect(String(error)).to.match(/telephone-event/);
  });

  it('hears a keypad tone once for all the packets of its event, and a second press of the same key again', async () => {
    session.setRemote(media());
    const digits: string[] = [];
    session.onDigit = (d) => digits.push(d);
    let seq = 100;
    for (const [ts, event] of [
      [1000, 5],
      [2000, 5],
    ] as const)
      for (const [end, duration] of [
        [false, 160],
        [false, 320],
        [true, 480],
        [true, 480],
        [true, 480],
      ] as const)
        await sendToSession({
          payloadType: 101,
          sequence: seq++,
          timestamp: ts,
          payload: buildTelephoneEvent({ event, end, volume: 10, duration }),
        });
    await eventually(async () => digits.length === 2 || undefined, 'two presses');
    expect(digits).to.deep.equal(['5', '5']);
  });

  it('hands the caller audio on in sequence order, whatever order it came in', async () => {
    session.setRemote(media());
    const frames: number[] = [];
    session.onAudio = (s) => frames.push(s[0]!);
    const order = [10, 12, 11, 13, 14, 15];
    for (const seq of order)
      await sendToSession({ sequence: seq, timestamp: seq * 160, payload: Buffer.alloc(160, alawmulaw.mulaw.encodeSample(seq * 100)) });
    await eventually(async () => frames.length >= 3 || undefined, 'frames');
    const expected = [10, 11, 12].map((s) => alawmulaw.mulaw.decodeSample(alawmulaw.mulaw.encodeSample(s * 100)));
    expect(frames.slice(0, 3)).to.deep.equal(expected);
  });

  it('hears silence, frame by frame on the packet clock, from a far end that stopped sending (silence suppression)', async () => {
    session.setRemote(media());
    const frames: Int16Array[] = [];
    session.onAudio = (s) => frames.push(s);
    for (let seq = 1; seq <= 5; seq++) await sendToSession({ sequence: seq, timestamp: seq * 160, payload: Buffer.alloc(160, 0x80) });
    await eventually(async () => frames.length >= 5 + 10 || undefined, 'silent frames after the last packet');
    expect(frames.slice(0, 5).every((f) => f.some((v) => v !== 0))).to.equal(true);
    expect(frames.slice(5).every((f) => f.every((v) => v === 0))).to.equal(true);
  });

  it('follows one source: a second SSRC is taken only once the first went quiet', async () => {
    session.setRemote(media());
    const frames: number[] = [];
    session.onAudio = (s) => frames.push(s[0]!);
    const loud = alawmulaw.mulaw.encodeSample(12_000);
    for (let seq = 1; seq <= 3; seq++) {
      await sendToSession({ ssrc: 1, sequence: seq, timestamp: seq * 160, payload: Buffer.alloc(160, loud) });
      await sendToSession({ ssrc: 2, sequence: 40_000 + seq, timestamp: seq * 160, payload: Buffer.alloc(160, 0x80) });
    }
    await eventually(async () => frames.length >= 3 || undefined, 'the first source');
    expect(frames.slice(0, 3).every((v) => v === alawmulaw.mulaw.decodeSample(loud))).to.equal(true);
    expect(session.stats().received.dropped).to.equal(3);
    expect(session.stats().received.lost).to.equal(0);
  });

  it('takes RTP from the address in the SDP, and from another source only after ten packets in a row (NAT)', async () => {
    const other = createSocket('udp4');
    await new Promise<void>((r) => other.bind(0, '127.0.0.2', () => r()));
    try {
      session.setRemote(media());
      const frames: Int16Array[] = [];
      session.onAudio = (s) => frames.push(s);
      for (let seq = 1; seq <= 9; seq++) await sendToSession({ sequence: seq, timestamp: seq * 160 }, other);
      await new Promise((r) => setImmediate(r));
      expect(frames).to.have.length(0);
      expect(session.stats().received.dropped).to.equal(9);
      for (let seq = 10; seq <= 14; seq++) await sendToSession({ sequence: seq, timestamp: seq * 160 }, other);
      await eventually(async () => frames.length > 0 || undefined, 'the learnt source heard');
      // packets now go where the far end's come from
      const got: number[] = [];
      other.on('message', () => got.push(1));
      await eventually(async () => got.length > 2 || undefined, 'packets sent to the learnt source');
    } finally {
      other.close();
    }
  });

  it('sends nothing while the far end holds the call, and its queued audio still runs out', async () => {
    session.setRemote(media({ receiving: false, sending: true }));
    let sent = false;
    session.enqueue(new Int16Array(8 * 100).fill(1000), () => {
      sent = true;
    });
    await eventually(async () => sent || undefined, 'the held audio run out');
    expect(heard).to.have.length(0);
  });
});

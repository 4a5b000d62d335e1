import { randomInt } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { performance } from 'node:perf_hooks';
import alawmulaw from 'alawmulaw';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { QueuedAudio } from '../media/speech-pipeline.js';
import { JitterBuffer, type JitterStats } from './jitter-buffer.js';
import { rtpMetrics } from './metrics.js';
import { buildRtp, buildTelephoneEvent, digitOfEvent, eventOfDigit, parseRtp, parseTelephoneEvent } from './rtp.js';
import { PTIME_MS, type RtpClock, type Ticking } from './rtp-clock.js';

export type Codec = 'PCMU' | 'PCMA';
/** the payload types RFC 3551 gives G.711 */
export const STATIC_PAYLOAD: Record<Codec, number> = { PCMU: 0, PCMA: 8 };
/** the sample rate of a phone line, and the samples of one packet */
export const LINE_RATE = 8000;
const FRAME = (LINE_RATE * PTIME_MS) / 1000;
/** packets held back for a missing one (60 ms) */
const JITTER_DEPTH = 3;
/** keypad tones sent: 100 ms of tone, its end packet three times, then 60 ms before the next (RFC 4733 §2.5.1.4) */
const TONE_PACKETS = 5;
const END_REPEATS = 3;
const TONE_GAP_PACKETS = 3;
/** packets in a row from one unexpected source before it is taken as the far end's (NAT) */
const LEARN_PACKETS = 10;
/** no frame of the caller's for this long: each packet time is heard as a silent frame */
const SILENCE_FILL_MS = 120;
/** another SSRC's audio is taken once the current one has sent nothing for this long (a new stream, after a transfer) */
const SOURCE_SWITCH_MS = 200;
/** the largest datagram taken as RTP (a 20 ms G.711 packet is 172 bytes) */
const MAX_DATAGRAM = 1500;

/** audio relayed from a bridged call held at most this many parts (20 ms each) */
const RELAY_BACKLOG = 5;

/** Queued audio: its samples, how many have gone out, and whom to tell once all have. */
type Outgoing = { readonly samples: Int16Array; sentSamples: number; readonly sent: (() => void) | null };

/** Where the far end's RTP goes, as its SDP says (docs/sip.md#media). */
export type RemoteMedia = Readonly<{
  address: string;
  port: number;
  codec: Codec;
  payloadType: number;
  /** the payload type of telephone-event, null when the far end offers none */
  dtmfPayloadType: number | null;
  /** sendrecv unless the far end holds the call (sendonly, inactive) */
  sending: boolean;
  receiving: boolean;
}>;

export type DirectionStats = Readonly<{ packets: number; bytes: number }>;
export type MediaStats = Readonly<{ sent: DirectionStats; received: JitterStats & { bytes: number; dropped: number } }>;

/** The even ports of the configured range, handed out round-robin (docs/sip.md#nat-and-ports). */
export class RtpPorts {
  private cursor: number;

  constructor(
    private readonly min: number,
    private readonly max: number,
  ) {
    this.cursor = min + 2 * randomInt(0, Math.max(1, Math.floor((max - min) / 2)));
  }

  /** Binds a UDP socket on a free even port of the range; throws when none is free. */
  async bind(address: string): Promise<Socket> {
    const count = Math.floor((this.max - this.min) / 2) + 1;
    for (let i = 0; i < count; i++) {
      const port = this.cursor;
      this.cursor = this.cursor + 2 > this.max ? this.min + (this.min % 2) : this.cursor + 2;
      const socket = createSocket(isIPv6(address) ? 'udp6' : 'udp4');
      const bound = await new Promise<boolean>((resolve) => {
        socket.once('error', () => resolve(false));
        socket.bind(port, address, () => resolve(true));
      });
      if (bound) return socket;
      socket.close();
    }
    throw new Error(`no free RTP port in ${this.min}-${this.max} (RTP_PORT_MIN, RTP_PORT_MAX)`);
  }
}

/**
 * One call's RTP stream (docs/sip.md#media): G.711 both ways in 20 ms packets, symmetric (it sends from the port
 * it receives on, and to where the far end's packets come from once they come), a jitter buffer on the way in,
 * RFC 4733 keypad tones both ways, and the statistics of each direction.
 */
export class RtpSession implements Ticking {
  private remote: RemoteMedia | null = null;
  /** where packets go: the SDP's address until the far end's packets show where it really is */
  private target: { address: string; port: number } | null = null;
  private latched = false;
  private readonly ssrc = randomInt(0, 0xffffffff);
  private sequence = randomInt(0, 0xffff);
  private timestamp = randomInt(0, 0xffffffff);
  /** the agent's audio waiting to go out, part by part */
  private outbound: Outgoing[] = [];
  /** keypad tones being sent, packet by packet; a gap sends audio (or silence) */
  private toneSteps: ({ kind: 'event'; payload: Buffer; first: boolean } | { kind: 'gap' })[] = [];
  private toneTimestamp = 0;
  private toneWaiters: (() => void)[] = [];
  private wasSilent = true;
  private jitter = new JitterBuffer<Buffer>({ depth: JITTER_DEPTH, unitsPerMs: LINE_RATE / 1000 });
  private lastEventTimestamp: number | null = null;
  private sent = { packets: 0, bytes: 0 };
  private receivedBytes = 0;
  private dropped = 0;
  private warnedSources = new Set<string>();
  private learning: { source: string; count: number } | null = null;
  /** the SSRC whose audio is taken, and when its last packet came */
  private source: number | null = null;
  private lastAudioAt = 0;
  /** the time of the last frame handed to `onAudio` (heard or silence) */
  private lastFrameAt = performance.now();
  private closed = false;
  /** the caller's audio, 20 ms at a time at 8 kHz (lost packets as silence) */
  onAudio: (samples: Int16Array) => void = () => undefined;
  /** a keypad tone from the far end */
  onDigit: (digit: string) => void = () => undefined;
  /** every packet sent (the benchmark's hook is the far end; this is for tests of the pacing) */
  onSent: ((at: number) => void) | null = null;

  constructor(
    private readonly socket: Socket,
    private readonly clock: RtpClock,
    private readonly log: LoggerPort,
    private readonly callId: string,
    /** addresses besides the SDP's from which the first packet may come (the signalling peer behind NAT) */
    private readonly trusted: readonly string[],
  ) {
    socket.on('message', (msg, rinfo) => this.receive(msg, rinfo));
    socket.on('error', (err) => log.warn({ err, callId }, 'RTP socket error'));
  }

  get port(): number {
    return this.socket.address().port;
  }

  get media(): RemoteMedia | null {
    return this.remote;
  }

  /** The far end's media as its SDP says; a change of address (a re-INVITE) starts latching again. */
  setRemote(r: RemoteMedia): void {
    const moved = !this.remote || this.remote.address !== r.address || this.remote.port !== r.port;
    if (!this.remote) this.lastFrameAt = performance.now();
    this.remote = r;
    if (moved) {
      this.target = { address: r.address, port: r.port };
      this.latched = false;
    }
    if (!this.closed) this.clock.add(this);
  }

  /**
   * Audio at 8 kHz, queued after what is waiting to go out and sent on the packet clock (docs/sip.md#media);
   * `sent` is called once its last sample has gone out, never when it is cleared first. The answer counts its
   * samples sent so far.
   */
  enqueue(samples: Int16Array, sent: (() => void) | null = null): QueuedAudio {
    const part: Outgoing = { samples, sentSamples: 0, sent };
    if (samples.length > 0) this.outbound.push(part);
    else if (sent) queueMicrotask(sent);
    return part;
  }

  /**
   * Audio relayed from another call's far end (a bridge), 20 ms at a time: queued like the agent's, but never more
   * than RELAY_BACKLOG packets, so that two clocks drifting apart never build up a delay.
   */
  relay(samples: Int16Array): void {
    if (this.outbound.length >= RELAY_BACKLOG) this.outbound.shift();
    this.enqueue(samples);
  }

  /** Drops the audio not yet sent (barge-in). */
  clear(): void {
    this.outbound = [];
  }

  /** Sends keypad tones as RFC 4733 events; resolves once the last one has been sent. */
  sendDigits(digits: string): Promise<void> {
    const dtmf = this.remote?.dtmfPayloadType ?? null;
    if (dtmf === null) return Promise.reject(new Error('the far end takes no telephone-event (RFC 4733) in its SDP'));
    for (const d of digits) {
      const event = eventOfDigit(d);
      if (event === null) continue;
      for (let i = 1; i <= TONE_PACKETS; i++)
        this.toneSteps.push({
          kind: 'event',
          first: i === 1,
          payload: buildTelephoneEvent({ event, end: false, volume: 10, duration: i * FRAME }),
        });
      for (let i = 0; i < END_REPEATS; i++)
        this.toneSteps.push({
          kind: 'event',
          first: false,
          payload: buildTelephoneEvent({ event, end: true, volume: 10, duration: TONE_PACKETS * FRAME }),
        });
      for (let i = 0; i < TONE_GAP_PACKETS; i++) this.toneSteps.push({ kind: 'gap' });
    }
    if (this.toneSteps.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.toneWaiters.push(resolve));
  }

  stats(): MediaStats {
    return { sent: { ...this.sent }, received: { ...this.jitter.stats, bytes: this.receivedBytes, dropped: this.dropped } };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.clock.remove(this);
    for (const frame of this.jitter.flush()) this.deliver(frame);
    const s = this.jitter.stats;
    rtpMetrics.lost.inc(s.lost);
    for (const w of this.toneWaiters) w();
    this.toneWaiters = [];
    try {
      this.socket.close();
    } catch {
      // already closed
    }
  }

  // ---- sending --------------------------------------------------------------------------------------------

  tick(due: number): void {
    for (let i = 0; i < due; i++) this.sendOne();
    this.fillSilence(due);
  }

  /**
   * A far end that sends nothing (silence suppression, comfort noise, a hold, a stream that stopped) is heard as
   * silence on the packet clock: once no frame has come for SILENCE_FILL_MS, what the jitter buffer holds is played
   * and each packet time without a packet is a silent frame, so the endpointer's time goes on and an utterance that
   * ended before the packets stopped is over (docs/sip.md#media).
   */
  private fillSilence(due: number): void {
    if (this.closed || !this.remote) return;
    const now = performance.now();
    if (now - this.lastFrameAt < SILENCE_FILL_MS) return;
    for (const frame of this.jitter.flush()) this.deliver(frame);
    for (let i = 0; i < due && now - this.lastFrameAt >= SILENCE_FILL_MS; i++) this.deliver(null, this.lastFrameAt + PTIME_MS);
  }

  private sendOne(): void {
    const r = this.remote;
    if (this.closed || !r || !this.target) return;
    const timestamp = this.timestamp;
    this.timestamp = (this.timestamp + FRAME) >>> 0;
    if (!r.receiving) {
      // the far end holds the call: nothing goes out, and the agent's audio runs on as if it were heard
      this.take();
      return;
    }
    const step = this.toneSteps.shift();
    if (step && this.toneSteps.length === 0) this.tonesDone();
    if (step?.kind === 'event' && r.dtmfPayloadType !== null) {
      // an event keeps the timestamp of its first packet
      if (step.first) this.toneTimestamp = timestamp;
      this.send(r.dtmfPayloadType, this.toneTimestamp, step.payload, step.first);
      return;
    }
    const samples = this.take();
    const silent = samples === null;
    const pcm = samples ?? new Int16Array(FRAME);
    const payload = Buffer.from(r.codec === 'PCMU' ? alawmulaw.mulaw.encode(pcm) : alawmulaw.alaw.encode(pcm));
    // the marker starts a talkspurt (RFC 3551 §4.1)
    this.send(r.payloadType, timestamp, payload, this.wasSilent && !silent);
    this.wasSilent = silent;
  }

  private tonesDone(): void {
    const waiters = this.toneWaiters;
    this.toneWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * The next 160 samples of the queued audio, padded with silence at the end of a part; null when nothing is
   * queued. A part whose last sample is taken is reported sent.
   */
  private take(): Int16Array | null {
    const head = this.outbound[0];
    if (!head) return null;
    const out = new Int16Array(FRAME);
    const n = Math.min(FRAME, head.samples.length - head.sentSamples);
    out.set(head.samples.subarray(head.sentSamples, head.sentSamples + n));
    head.sentSamples += n;
    if (head.sentSamples >= head.samples.length) {
      this.outbound.shift();
      if (head.sent) {
        try {
          head.sent();
        } catch (err) {
          this.log.error({ err, callId: this.callId }, 'the end of queued RTP audio could not be reported');
        }
      }
    }
    return out;
  }

  private send(payloadType: number, timestamp: number, payload: Buffer, marker: boolean): void {
    const packet = buildRtp({ payloadType, sequence: this.sequence, timestamp, ssrc: this.ssrc, marker, payload });
    this.sequence = (this.sequence + 1) & 0xffff;
    const t = this.target!;
    this.socket.send(packet, t.port, t.address, (err) => {
      if (err) this.log.debug({ err: err.message, callId: this.callId }, 'RTP send failed');
    });
    this.sent.packets++;
    this.sent.bytes += packet.length;
    this.onSent?.(performance.now());
  }

  // ---- receiving ------------------------------------------------------------------------------------------

  private receive(msg: Buffer, rinfo: RemoteInfo): void {
    const r = this.remote;
    if (this.closed || !r || msg.length > MAX_DATAGRAM) return;
    if (!this.accepts(rinfo)) {
      this.dropped++;
      const source = `${rinfo.address}:${rinfo.port}`;
      if (!this.warnedSources.has(source) && this.warnedSources.size < 8) {
        this.warnedSources.add(source);
        this.log.warn({ callId: this.callId, source }, 'RTP from an unexpected address dropped');
      }
      return;
    }
    const p = parseRtp(msg);
    if (!p) {
      this.dropped++;
      return;
    }
    this.receivedBytes += msg.length;
    if (r.dtmfPayloadType !== null && p.payloadType === r.dtmfPayloadType) {
      const e = parseTelephoneEvent(p.payload);
      // one event is many packets with its start's timestamp: the first one reports it
      if (e && p.timestamp !== this.lastEventTimestamp) {
        this.lastEventTimestamp = p.timestamp;
        const digit = digitOfEvent(e.event);
        if (digit) this.onDigit(digit);
      }
      return;
    }
    if (p.payloadType !== r.payloadType) {
      this.dropped++;
      return;
    }
    const now = performance.now();
    if (p.ssrc !== this.source) {
      // one source at a time (its own sequence and timing): another is taken once the current one went quiet
      if (this.source !== null && now - this.lastAudioAt < SOURCE_SWITCH_MS) {
        this.dropped++;
        return;
      }
      if (this.source !== null) for (const frame of this.jitter.flush()) this.deliver(frame);
      this.jitter.restart();
      this.source = p.ssrc;
    }
    this.lastAudioAt = now;
    for (const frame of this.jitter.push(p.sequence, p.timestamp, now, p.payload)) this.deliver(frame);
  }

  /**
   * Symmetric RTP: the first packet from the SDP's address, or from the signalling peer's, fixes where the far end
   * is. A phone behind NAT may name an address in its SDP that its packets never come from: when LEARN_PACKETS
   * packets in a row come from one other source and none from the expected ones, that source is learnt (as
   * Asterisk's strict RTP learns a new source).
   */
  private accepts(rinfo: RemoteInfo): boolean {
    const t = this.target!;
    if (this.latched) return rinfo.address === t.address && rinfo.port === t.port;
    if (rinfo.address !== this.remote!.address && !this.trusted.includes(rinfo.address)) {
      const source = `${rinfo.address}:${rinfo.port}`;
      this.learning = this.learning?.source === source ? { source, count: this.learning.count + 1 } : { source, count: 1 };
      if (this.learning.count < LEARN_PACKETS) return false;
    }
    this.target = { address: rinfo.address, port: rinfo.port };
    this.latched = true;
    return true;
  }

  /** One 20 ms frame of the caller's audio (null: silence) to the listener; `at` is the time it stands for. */
  private deliver(frame: Buffer | null, at = performance.now()): void {
    this.lastFrameAt = at;
    const codec = this.remote?.codec ?? 'PCMU';
    const samples =
      frame === null ? new Int16Array(FRAME) : codec === 'PCMU' ? alawmulaw.mulaw.decode(frame) : alawmulaw.alaw.decode(frame);
    try {
      this.onAudio(samples);
    } catch (err) {
      this.log.error({ err, callId: this.callId }, 'handling RTP audio failed');
    }
  }
}

import type {
  AnsweredBy,
  CallLeg,
  DialFailure,
  LegEndReason,
  LegListener,
  LegReport,
  PlaybackOptions,
  StoppedPlayback,
} from '../../application/calls/voice-engine.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { TransferCallerId } from '../../domain/call/call.js';
import { ListenerQueue } from '../media/listener-queue.js';
import { SpeechPipeline, type SpeechPipelineDeps } from '../media/speech-pipeline.js';
import { LINE_RATE, type MediaStats, type RtpSession } from './rtp-session.js';

/** how long after a packet is sent the caller hears it (a phone's jitter buffer, typically 40-80 ms) */
const PLAYOUT_DELAY_MS = 60;

/** What the leg asks of the engine that holds its dialog. */
export type LegSignalling = Readonly<{
  transfer: (to: string, callerId: TransferCallerId) => Promise<void>;
  bridge: (sipUri: string) => Promise<void>;
  hangup: () => void;
  /** the bridge's relayed audio, when the call is recorded (docs/sip.md#recording-bridged-calls) */
  bridgedAudio: () => Readonly<{ wav: Uint8Array; durationMs: number }> | null;
}>;

/**
 * A phone call over SIP, as the call session's leg (docs/sip.md#media): the RTP stream is the transport of the
 * media pipeline web calls also run on (docs/calls.md#the-media-pipeline). The caller's audio goes through the
 * endpointer to recognition; the agent's speech is rendered, brought to 8 kHz and sent on the packet clock; keypad
 * tones come from RFC 4733 events (or SIP INFO) and go out as RFC 4733 events.
 */
export class SipLeg implements CallLeg {
  private readonly events: ListenerQueue;
  private readonly pipeline: SpeechPipeline;
  private over = false;
  private rang = false;
  /** the caller's audio goes to the pipeline until the call is bridged elsewhere */
  private listening = true;

  constructor(
    /** the SIP Call-ID */
    readonly engineCallId: string,
    private readonly callId: string,
    private readonly rtp: RtpSession,
    listener: LegListener,
    private readonly signalling: LegSignalling,
    log: LoggerPort,
    speech: SpeechPipelineDeps,
  ) {
    this.events = new ListenerQueue(listener, (err) => log.error({ err, callId }, 'a SIP call event failed'));
    this.pipeline = new SpeechPipeline(
      callId,
      this.events,
      {
        sampleRate: LINE_RATE,
        playoutDelayMs: PLAYOUT_DELAY_MS,
        // the packet clock paces the agent's audio: each part is queued whole (docs/calls.md#the-media-pipeline)
        output: { kind: 'queued', enqueue: (samples, sent) => rtp.enqueue(samples, sent) },
        clear: () => rtp.clear(),
      },
      speech,
    );
    rtp.onAudio = (samples) => {
      if (this.listening) this.pipeline.hear(samples);
    };
    rtp.onDigit = (digit) => this.digit(digit);
  }

  get ended(): boolean {
    return this.over;
  }

  // ---- what the engine reports --------------------------------------------------------------------------

  ringing(): void {
    if (this.rang || this.over) return;
    this.rang = true;
    this.events.send((l) => l.ringing());
  }

  answered(by: AnsweredBy = 'human'): void {
    if (!this.over) this.events.send((l) => l.answered(by));
  }

  digit(digit: string): void {
    if (!this.over) this.events.send((l) => l.digitReceived(digit));
  }

  /** The dial never connected; nothing follows. */
  failed(reason: DialFailure, detail: string): void {
    if (this.over) return;
    this.over = true;
    this.pipeline.end();
    this.rtp.close();
    this.events.last((l) => l.failed(reason, detail));
  }

  /** The leg is over for the session (the dialog may live on in a bridge after a transfer). */
  end(reason: LegEndReason, detail: string | null): MediaStats {
    const stats = this.rtp.stats();
    if (this.over) return stats;
    this.over = true;
    this.pipeline.end();
    this.events.last((l) => l.ended(reason, detail));
    return stats;
  }

  /** The caller's audio now goes to a bridged party, not to the agent. */
  stopListening(): void {
    this.listening = false;
    this.pipeline.stopPlayback();
  }

  // ---- what the session asks ----------------------------------------------------------------------------

  play(playbackId: string, text: string, o: PlaybackOptions): void {
    this.pipeline.play(playbackId, text, o);
  }

  stopPlayback(): StoppedPlayback {
    return this.pipeline.stopPlayback();
  }

  isPlaying(): boolean {
    return this.pipeline.isPlaying();
  }

  sendDigits(digits: string): Promise<void> {
    return this.rtp.sendDigits(digits);
  }

  transfer(to: string, o: Readonly<{ callerId?: TransferCallerId }> = {}): Promise<void> {
    return this.signalling.transfer(to, o.callerId ?? 'transferee');
  }

  bridge(sipUri: string): Promise<void> {
    return this.signalling.bridge(sipUri);
  }

  async hangup(): Promise<void> {
    if (!this.over) this.signalling.hangup();
  }

  /** The SIP Call-ID and the RTP each way, for the call record (docs/sip.md#observability); media null when none flowed. */
  bridgedAudio(): Readonly<{ wav: Uint8Array; durationMs: number }> | null {
    return this.signalling.bridgedAudio();
  }

  report(): LegReport {
    const media = this.rtp.media;
    const s = this.rtp.stats();
    const flowed = s.sent.packets + s.received.packets > 0;
    return {
      protocol: 'sip',
      engineCallId: this.engineCallId,
      media:
        media && flowed
          ? {
              codec: media.codec,
              sent: s.sent,
              received: {
                packets: s.received.packets,
                bytes: s.received.bytes,
                lost: s.received.lost,
                late: s.received.late,
                jitterMs: s.received.jitterMs,
              },
            }
          : null,
    };
  }

  /** for logs */
  toString(): string {
    return `SipLeg(${this.callId}, ${this.engineCallId})`;
  }
}

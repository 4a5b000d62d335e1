import { WebSocket } from 'ws';
import type { JoinedWebCall } from '../../application/calls/call-commands.js';
import {
  type CallLeg,
  type LegEndReason,
  type LegListener,
  type PlaybackOptions,
  type StoppedPlayback,
  TelephonyError,
} from '../../application/calls/voice-engine.port.js';
import { ListenerQueue } from '../media/listener-queue.js';
import { type AudioTransport, FRAME_MS, SpeechPipeline, type SpeechPipelineDeps } from '../media/speech-pipeline.js';

/** The audio both ways: 16-bit little-endian mono PCM at 16 kHz, in 20 ms frames (docs/calls.md#the-socket). */
export const WEB_CALL_SAMPLE_RATE = 16_000;
/** the agent's audio is sent this far ahead of real time, so a busy moment of the server does not starve the page */
const LEAD_MS = 250;
/** how long after its first frame arrives the page starts playing (its jitter buffer, in the SDK) */
export const PLAYOUT_DELAY_MS = 60;
/** the longest text a page may type in one turn */
export const MAX_TYPED_CHARS = 2000;

export type WebCallLegDeps = SpeechPipelineDeps;

/** What the server sends the page as text frames (docs/calls.md#the-socket). */
export type ServerMessage =
  | { type: 'joined'; callId: string; sampleRate: number; encoding: 'pcm_s16le'; frameMs: number }
  | { type: 'speech'; id: string; text: string }
  | { type: 'speech_end'; id: string }
  | { type: 'clear' }
  | { type: 'listening' }
  | { type: 'transcript'; role: 'user'; text: string; typed: boolean }
  | { type: 'dtmf'; digits: string }
  | { type: 'warning'; code: 'SPEECH_UNAVAILABLE'; message: string }
  | { type: 'ended'; by: 'caller' | 'agent' }
  | { type: 'error'; code: string; message: string };

/**
 * A browser on a web call, as the call session's leg (docs/calls.md#web-calls): the socket is the transport of the
 * media pipeline shared with phone lines (docs/calls.md#the-media-pipeline). The page's microphone audio is cut
 * into utterances by the server's endpointer and recognised; the agent's speech is streamed to the page in real
 * time. On barge-in the page is told to drop what it holds, and the words heard are those played until then.
 */
export class WebCallLeg implements CallLeg {
  readonly engineCallId: string;
  private readonly events: ListenerQueue;
  private readonly pipeline: SpeechPipeline;
  private over = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly call: JoinedWebCall,
    listener: LegListener,
    d: WebCallLegDeps,
  ) {
    this.engineCallId = `web_${call.callId}`;
    this.events = new ListenerQueue(listener, (err) => d.log.error({ err, callId: call.callId }, 'a web call event failed'));
    const transport: AudioTransport = {
      sampleRate: WEB_CALL_SAMPLE_RATE,
      playoutDelayMs: PLAYOUT_DELAY_MS,
      output: { kind: 'pushed', leadMs: LEAD_MS, send: (samples) => this.sendAudio(samples) },
      clear: () => this.send({ type: 'clear' }),
    };
    this.pipeline = new SpeechPipeline(call.callId, this.events, transport, d, {
      speech: (id, text) => this.send({ type: 'speech', id, text }),
      speechEnd: (id) => this.send({ type: 'speech_end', id }),
      listening: () => this.send({ type: 'listening' }),
      transcript: (text, typed) => this.send({ type: 'transcript', role: 'user', text, typed }),
      unavailable: (what, message) =>
        this.send({
          type: 'warning',
          code: 'SPEECH_UNAVAILABLE',
          message:
            what === 'recognition'
              ? `Speech recognition is unavailable on the server (${message}); type instead.`
              : `Speech synthesis is unavailable on the server (${message}); the agent's words are shown, not spoken.`,
        }),
    });
    this.send({ type: 'joined', callId: call.callId, sampleRate: WEB_CALL_SAMPLE_RATE, encoding: 'pcm_s16le', frameMs: FRAME_MS });
    // the browser is there: the call is answered (by a person)
    this.events.send((l) => l.answered('human'));
    if (socket.readyState !== WebSocket.OPEN) this.end('remote_hangup', 'the page left while joining');
  }

  get callId(): string {
    return this.call.callId;
  }

  // ---- from the page ------------------------------------------------------------------------------------

  /** A frame from the page: binary is microphone audio, text a JSON message. */
  onMessage(data: Buffer, isBinary: boolean): void {
    if (this.over) return;
    if (isBinary) {
      // a trailing odd byte is no sample
      const usable = data.length - (data.length % 2);
      if (usable === 0) return;
      const samples = new Int16Array(usable / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2);
      this.pipeline.hear(samples);
      return;
    }
    let msg: { type?: unknown; text?: unknown };
    try {
      msg = JSON.parse(data.toString('utf8')) as typeof msg;
    } catch {
      this.send({ type: 'error', code: 'BAD_MESSAGE', message: 'text frames must be JSON messages' });
      return;
    }
    if (msg?.type === 'text' && typeof msg.text === 'string') this.typed(msg.text);
    else if (msg?.type === 'hangup') this.end('remote_hangup', 'the caller hung up');
    else this.send({ type: 'error', code: 'BAD_MESSAGE', message: 'known messages: {"type":"text","text":"…"}, {"type":"hangup"}' });
  }

  /** The page closed the socket (or the connection dropped). */
  onClose(): void {
    if (!this.over) this.end('remote_hangup', 'the page closed the connection');
  }

  private typed(raw: string): void {
    const text = raw.replace(/\s+/g, ' ').trim();
    if (!text) return;
    if (text.length > MAX_TYPED_CHARS) {
      this.send({ type: 'error', code: 'BAD_MESSAGE', message: `a typed turn holds at most ${MAX_TYPED_CHARS} characters` });
      return;
    }
    this.pipeline.typed(text);
  }

  // ---- to the page --------------------------------------------------------------------------------------

  play(playbackId: string, text: string, o: PlaybackOptions): void {
    this.pipeline.play(playbackId, text, o);
  }

  stopPlayback(): StoppedPlayback {
    return this.pipeline.stopPlayback();
  }

  isPlaying(): boolean {
    return this.pipeline.isPlaying();
  }

  /** A browser has no keypad line: the tones are passed to the page as a `dtmf` message. */
  async sendDigits(digits: string): Promise<void> {
    this.send({ type: 'dtmf', digits });
  }

  async transfer(): Promise<void> {
    throw new TelephonyError('a web call cannot be transferred', false);
  }

  async bridge(): Promise<void> {
    throw new TelephonyError('a web call cannot be bridged to SIP', false);
  }

  async hangup(): Promise<void> {
    if (!this.over) this.end('local_hangup', null);
  }

  // ---- the end ------------------------------------------------------------------------------------------

  private end(reason: LegEndReason, detail: string | null): void {
    if (this.over) return;
    this.pipeline.end();
    this.over = true;
    if (this.socket.readyState === WebSocket.OPEN) {
      this.send({ type: 'ended', by: reason === 'remote_hangup' ? 'caller' : 'agent' }, true);
      this.socket.close(1000, 'call ended');
    }
    this.events.last((l) => l.ended(reason, detail));
  }

  private send(m: ServerMessage, evenWhenOver = false): void {
    if ((this.over && !evenWhenOver) || this.socket.readyState !== WebSocket.OPEN) return;
    this.socket.send(JSON.stringify(m));
  }

  private sendAudio(samples: Int16Array): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    const bytes = Buffer.allocUnsafe(samples.length * 2);
    for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i]!, i * 2);
    this.socket.send(bytes, { binary: true });
  }
}

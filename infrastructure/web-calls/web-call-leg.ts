import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import type { JoinedWebCall } from '../../application/calls/call-commands.js';
import type { Recognition, RecognitionStream, SpeechToTextPort } from '../../application/calls/speech-to-text.port.js';
import { SpeechUnavailableError, type TextToSpeechPort } from '../../application/calls/text-to-speech.port.js';
import {
  type CallLeg,
  type LegEndReason,
  type LegListener,
  type PlaybackOptions,
  type StoppedPlayback,
  TelephonyError,
} from '../../application/calls/voice-engine.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { takeSentences } from '../../domain/call/voice-reply.js';
import { resample } from '../speech/wav.js';
import { Endpointer, FRAME_MS } from './endpointer.js';

/** The audio both ways: 16-bit little-endian mono PCM at 16 kHz, in 20 ms frames (docs/calls.md#the-socket). */
export const WEB_CALL_SAMPLE_RATE = 16_000;
const SAMPLES_PER_MS = WEB_CALL_SAMPLE_RATE / 1000;
const FRAME_SAMPLES = FRAME_MS * SAMPLES_PER_MS;
/** the agent's audio is sent this far ahead of real time, so a busy moment of the server does not starve the page */
const LEAD_MS = 250;
/** how long after its first frame arrives the page starts playing (its jitter buffer, in the SDK) */
export const PLAYOUT_DELAY_MS = 60;
/** the longest text a page may type in one turn */
export const MAX_TYPED_CHARS = 2000;

const NOTHING_STOPPED: StoppedPlayback = { cut: [], heard: {} };

export type WebCallLegDeps = Readonly<{
  tts: TextToSpeechPort;
  stt: SpeechToTextPort;
  log: LoggerPort;
  /** the silence that ends an utterance (WEB_CALL_END_SILENCE_MS) */
  endSilenceMs: number;
}>;

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

type Rendered = Readonly<{ samples: Int16Array; synthesisMs: number }> | Readonly<{ failed: string }>;
type Part = { text: string; words: number; audio: Promise<Rendered> };
type Playback = {
  id: string;
  text: string;
  parts: Part[];
  /** the part playing (or next) */
  part: number;
  /** words of the parts played to the end */
  wordsDone: number;
  started: boolean;
  /** when the current part's first frame went out, and its length */
  partStartedAt: number;
  partMs: number;
};

const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);

/**
 * Listener calls, delivered in order, one at a time, never inside the leg's own methods (a session calling the
 * leg must not be re-entered).
 */
class ListenerQueue {
  private readonly queue: ((l: LegListener) => void)[] = [];
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly listener: LegListener,
    private readonly onError: (err: unknown) => void,
  ) {}

  send(call: (l: LegListener) => void): void {
    if (this.closed) return;
    this.queue.push(call);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      for (let next = this.queue.shift(); next; next = this.queue.shift()) {
        try {
          next(this.listener);
        } catch (err) {
          this.onError(err);
        }
      }
    });
  }

  /** the last call: nothing follows it */
  last(call: (l: LegListener) => void): void {
    this.send(call);
    this.closed = true;
  }
}

/**
 * A browser on a web call, as the call session's leg (docs/calls.md#web-calls): the page's microphone audio is cut
 * into utterances by the server's endpointer and recognised by the speech-to-text adapter; the agent's speech is
 * rendered by the text-to-speech adapter and streamed to the page in real time. Barge-in works as on a phone line:
 * the session hears an utterance start over the agent and stops the playback; the page is told to drop what it
 * holds, and the words heard are those of the audio played until then.
 */
export class WebCallLeg implements CallLeg {
  readonly engineCallId: string;
  private readonly events: ListenerQueue;
  private readonly endpointer: Endpointer;
  private over = false;
  private stoppedAtEnd: StoppedPlayback = NOTHING_STOPPED;
  private queue: Playback[] = [];
  /** bumped by every stop: a pump or stream of an earlier epoch gives up */
  private epoch = 0;
  private pumping = false;
  /** the part being streamed: its timer, and how its stream ends (false: stopped) */
  private streaming: { timer: NodeJS.Timeout; done: (played: boolean) => void } | null = null;
  private utterance: { id: string; stream: RecognitionStream } | null = null;
  private utterances = 0;
  /** final transcripts go to the session in the order the utterances ended */
  private recognitions: Promise<void> = Promise.resolve();
  private warned = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly call: JoinedWebCall,
    listener: LegListener,
    private readonly d: WebCallLegDeps,
  ) {
    this.engineCallId = `web_${call.callId}`;
    this.events = new ListenerQueue(listener, (err) => d.log.error({ err, callId: call.callId }, 'a web call event failed'));
    this.endpointer = new Endpointer({ sampleRate: WEB_CALL_SAMPLE_RATE, endSilenceMs: d.endSilenceMs });
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
      this.hear(samples);
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

  private hear(samples: Int16Array): void {
    for (const ev of this.endpointer.push(samples)) {
      if (ev.kind === 'start') {
        const id = `u${++this.utterances}`;
        this.utterance = { id, stream: this.d.stt.start() };
        this.utterance.stream.write(ev.audio);
        this.send({ type: 'listening' });
        // nothing is recognised before the end: the session learns that someone speaks (barge-in), not what
        this.events.send((l) => l.callerSpeech({ utteranceId: id, transcript: '', confidence: null, final: false }));
      } else if (ev.kind === 'audio') {
        this.utterance?.stream.write(ev.audio);
      } else if (this.utterance) {
        const { id, stream } = this.utterance;
        this.utterance = null;
        const endedAt = performance.now();
        this.recognitions = this.recognitions.then(() => this.recognise(id, stream, endedAt));
      }
    }
  }

  private async recognise(utteranceId: string, stream: RecognitionStream, endedAt: number): Promise<void> {
    let r: Recognition;
    try {
      r = await stream.finish();
    } catch (err) {
      this.speechUnavailable(err, 'recognition');
      r = { text: '', confidence: null };
    }
    if (this.over) return;
    const recognitionMs = performance.now() - endedAt;
    if (r.text) this.send({ type: 'transcript', role: 'user', text: r.text, typed: false });
    this.events.send((l) => l.callerSpeech({ utteranceId, transcript: r.text, confidence: r.confidence, final: true, recognitionMs }));
  }

  private typed(raw: string): void {
    const text = raw.replace(/\s+/g, ' ').trim();
    if (!text) return;
    if (text.length > MAX_TYPED_CHARS) {
      this.send({ type: 'error', code: 'BAD_MESSAGE', message: `a typed turn holds at most ${MAX_TYPED_CHARS} characters` });
      return;
    }
    const utteranceId = `t${++this.utterances}`;
    // after the spoken turns still being recognised, so the call keeps the order the caller spoke in
    this.recognitions = this.recognitions.then(() => {
      if (this.over) return;
      this.send({ type: 'transcript', role: 'user', text, typed: true });
      // what was typed is exactly what was meant: confidence 1, nothing to recognise
      this.events.send((l) => l.callerSpeech({ utteranceId, transcript: text, confidence: 1, final: true, recognitionMs: null }));
    });
  }

  // ---- to the page --------------------------------------------------------------------------------------

  play(playbackId: string, text: string, o: PlaybackOptions): void {
    if (this.over) return;
    // sentence by sentence: the first one plays while the next are rendered
    const { sentences, rest } = takeSentences(`${text} `);
    const pieces = [...sentences, ...(rest.trim() ? [rest.trim()] : [])];
    const parts = pieces.map((piece) => ({ text: piece, words: wordsOf(piece).length, audio: this.render(piece, o) }));
    this.queue.push({ id: playbackId, text, parts, part: 0, wordsDone: 0, started: false, partStartedAt: 0, partMs: 0 });
    void this.pump();
  }

  stopPlayback(): StoppedPlayback {
    if (this.over) {
      // what was heard when the leg ended, reported once
      const atEnd = this.stoppedAtEnd;
      this.stoppedAtEnd = NOTHING_STOPPED;
      return atEnd;
    }
    if (this.queue.length === 0) return NOTHING_STOPPED;
    const stopped = this.whatWasHeard();
    this.silence();
    this.send({ type: 'clear' });
    for (const id of stopped.cut) this.events.send((l) => l.playbackFinished(id));
    return stopped;
  }

  isPlaying(): boolean {
    return !this.over && this.queue.length > 0;
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

  private async render(text: string, o: PlaybackOptions): Promise<Rendered> {
    const t = performance.now();
    try {
      const pcm = await this.d.tts.synthesize(text, {
        voice: o.voice,
        ...(o.wordsPerMinute !== undefined ? { wordsPerMinute: o.wordsPerMinute } : {}),
      });
      return { samples: resample(pcm, WEB_CALL_SAMPLE_RATE).samples, synthesisMs: performance.now() - t };
    } catch (err) {
      this.speechUnavailable(err, 'synthesis');
      return { failed: err instanceof Error ? err.message : String(err) };
    }
  }

  /** Plays the queue in order, each playback's parts as they are rendered. One pump at a time. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.over && this.queue.length > 0) {
        const p = this.queue[0]!;
        const epoch = this.epoch;
        for (; p.part < p.parts.length; p.part++) {
          const part = p.parts[p.part]!;
          const r = await part.audio;
          if (this.epoch !== epoch || this.over) break;
          if (!p.started) {
            p.started = true;
            this.send({ type: 'speech', id: p.id, text: p.text });
            const synthesisMs = 'failed' in r ? null : r.synthesisMs;
            this.events.send((l) => l.playbackStarted?.(p.id, { synthesisMs }));
          }
          // a part the engine could not render is shown on the page (the `speech` message) and not heard
          if ('failed' in r || r.samples.length === 0) {
            p.wordsDone += part.words;
            continue;
          }
          if (!(await this.stream(p, r.samples, epoch))) break;
          p.wordsDone += part.words;
        }
        if (this.epoch !== epoch || this.over) continue;
        this.queue.shift();
        if (p.started) this.send({ type: 'speech_end', id: p.id });
        this.events.send((l) => l.playbackFinished(p.id));
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Sends one part's frames in real time (LEAD_MS ahead); true once it has played, false when stopped. */
  private stream(p: Playback, samples: Int16Array, epoch: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const start = performance.now();
      p.partStartedAt = start;
      p.partMs = samples.length / SAMPLES_PER_MS;
      let sent = 0;
      const done = (played: boolean) => {
        clearInterval(timer);
        this.streaming = null;
        resolve(played);
      };
      const tick = () => {
        if (this.epoch !== epoch || this.over) {
          done(false);
          return;
        }
        const elapsed = performance.now() - start;
        const due = Math.min(samples.length, Math.ceil((elapsed + LEAD_MS) * SAMPLES_PER_MS));
        while (sent < due) {
          const end = Math.min(due, sent + FRAME_SAMPLES);
          this.sendAudio(samples.subarray(sent, end));
          sent = end;
        }
        if (elapsed >= p.partMs) done(true);
      };
      const timer = setInterval(tick, FRAME_MS);
      this.streaming = { timer, done };
      tick();
    });
  }

  /**
   * The playbacks queued now, and what was heard of each: of the one playing, its parts played to the end and
   * the share of the current part's audio played so far, in words (the page plays PLAYOUT_DELAY_MS behind).
   */
  private whatWasHeard(): StoppedPlayback {
    const heard: Record<string, string> = {};
    const cut = this.queue.map((p) => p.id);
    for (const p of this.queue) {
      if (!p.started) {
        heard[p.id] = '';
        continue;
      }
      const part = p.parts[p.part];
      const share =
        part && p.partMs > 0 ? Math.min(1, Math.max(0, (performance.now() - p.partStartedAt - PLAYOUT_DELAY_MS) / p.partMs)) : 0;
      const words = p.wordsDone + Math.floor(share * (part?.words ?? 0));
      heard[p.id] = wordsOf(p.text).slice(0, words).join(' ');
    }
    return { cut, heard };
  }

  /** Drops everything queued and stops the frames. */
  private silence(): void {
    this.epoch++;
    this.queue = [];
    this.streaming?.done(false);
  }

  // ---- the end ------------------------------------------------------------------------------------------

  private end(reason: LegEndReason, detail: string | null): void {
    if (this.over) return;
    this.stoppedAtEnd = this.queue.length > 0 ? this.whatWasHeard() : NOTHING_STOPPED;
    this.silence();
    this.over = true;
    this.utterance?.stream.abort();
    this.utterance = null;
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

  /** An engine that is missing or failing: logged with its fix, and the page told once (it can still type). */
  private speechUnavailable(err: unknown, what: 'recognition' | 'synthesis'): void {
    const message = err instanceof Error ? err.message : String(err);
    if (!(err instanceof SpeechUnavailableError)) this.d.log.error({ err, callId: this.callId }, `web call ${what} failed`);
    else this.d.log.error({ callId: this.callId, fix: message }, `web call ${what}: the speech engine is unavailable`);
    if (this.warned) return;
    this.warned = true;
    this.send({
      type: 'warning',
      code: 'SPEECH_UNAVAILABLE',
      message:
        what === 'recognition'
          ? `Speech recognition is unavailable on the server (${message}); type instead.`
          : `Speech synthesis is unavailable on the server (${message}); the agent's words are shown, not spoken.`,
    });
  }
}

import { performance } from 'node:perf_hooks';
import type { Recognition, RecognitionStream, SpeechToTextPort } from '../../application/calls/speech-to-text.port.js';
import { SpeechUnavailableError, type TextToSpeechPort } from '../../application/calls/text-to-speech.port.js';
import type { PlaybackOptions, StoppedPlayback } from '../../application/calls/voice-engine.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { takeSentences } from '../../domain/call/voice-reply.js';
import { toRate, Upsampler } from './audio.js';
import { Endpointer, FRAME_MS } from './endpointer.js';
import type { ListenerQueue } from './listener-queue.js';

export { FRAME_MS } from './endpointer.js';

/**
 * Where a call's audio goes and comes from: a browser's socket, or a phone line's RTP stream. The agent's speech
 * goes out at `sampleRate` in one of two ways (docs/calls.md#the-media-pipeline): pushed in real time by the
 * pipeline, or queued whole and sent by the transport on its own clock. Either way the transport drops what it
 * holds when the caller cuts in.
 */
export interface AudioTransport {
  /** the rate of the audio both ways */
  readonly sampleRate: number;
  /** how long after it goes out the far end hears the audio (its jitter buffer) */
  readonly playoutDelayMs: number;
  readonly output: PushedOutput | QueuedOutput;
  /** the caller cut in: audio handed over and not yet heard is dropped */
  clear(): void;
}

/** A transport without a clock of its own (a socket): the pipeline hands it the audio in real time, `leadMs` ahead. */
export type PushedOutput = Readonly<{ kind: 'pushed'; leadMs: number; send(samples: Int16Array): void }>;

/**
 * A transport that sends on its own clock (a phone line's packet clock): each part of the agent's speech is queued
 * whole, after what is queued; `sent` is called once its last sample has gone out (never for a part cleared), and
 * the answer tells how many of its samples have gone out so far. One clock paces the audio, so a late timer never
 * leaves the line short of audio in the middle of a word.
 */
export type QueuedOutput = Readonly<{ kind: 'queued'; enqueue(samples: Int16Array, sent: () => void): QueuedAudio }>;
export type QueuedAudio = Readonly<{ sentSamples: number }>;

/** What a transport may show the far end besides audio (a web page does; a phone line has nowhere to show it). */
export type PipelineNotices = Partial<{
  speech(id: string, text: string): void;
  speechEnd(id: string): void;
  listening(): void;
  transcript(text: string, typed: boolean): void;
  unavailable(what: 'recognition' | 'synthesis', message: string): void;
}>;

export type SpeechPipelineDeps = Readonly<{
  tts: TextToSpeechPort;
  stt: SpeechToTextPort;
  log: LoggerPort;
  /** the silence that ends an utterance */
  endSilenceMs: number;
}>;

const NOTHING_STOPPED: StoppedPlayback = { cut: [], heard: {} };

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
  /** when the current part started going out, and its length */
  partStartedAt: number;
  partMs: number;
  /** of a queued part, how much has gone out (ms); null: as much as the time since it started */
  partSentMs: (() => number) | null;
};

const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);

/**
 * One call's speech, whatever carries its audio (docs/calls.md#the-media-pipeline): the caller's audio is cut into
 * utterances by the endpointer and recognised while the caller speaks; the agent's speech is rendered sentence by
 * sentence, brought to the transport's rate and handed over in real time; a cut stops it at once and reports the
 * words heard. Web calls and SIP calls both run on it, each with its own `AudioTransport`.
 */
export class SpeechPipeline {
  private readonly endpointer: Endpointer;
  private readonly samplesPerMs: number;
  private readonly frameSamples: number;
  private readonly toRecogniser: Upsampler;
  private over = false;
  private stoppedAtEnd: StoppedPlayback = NOTHING_STOPPED;
  private queue: Playback[] = [];
  /** bumped by every stop: a pump or stream of an earlier epoch gives up */
  private epoch = 0;
  private pumping = false;
  /** the part being streamed: how its stream ends (false: stopped) */
  private streaming: { done: (played: boolean) => void } | null = null;
  private utterance: { id: string; stream: RecognitionStream } | null = null;
  private utterances = 0;
  /** final transcripts go to the session in the order the utterances ended */
  private recognitions: Promise<void> = Promise.resolve();
  private warned = false;

  constructor(
    private readonly callId: string,
    private readonly events: ListenerQueue,
    private readonly transport: AudioTransport,
    private readonly d: SpeechPipelineDeps,
    private readonly notices: PipelineNotices = {},
  ) {
    this.samplesPerMs = transport.sampleRate / 1000;
    this.frameSamples = FRAME_MS * this.samplesPerMs;
    this.endpointer = new Endpointer({ sampleRate: transport.sampleRate, endSilenceMs: d.endSilenceMs });
    this.toRecogniser = new Upsampler(transport.sampleRate, d.stt.sampleRate);
  }

  // ---- the caller -----------------------------------------------------------------------------------------

  /** The caller's audio at the transport's rate, in order. */
  hear(samples: Int16Array): void {
    if (this.over) return;
    for (const ev of this.endpointer.push(samples)) {
      if (ev.kind === 'start') {
        const id = `u${++this.utterances}`;
        this.utterance = { id, stream: this.d.stt.start() };
        this.utterance.stream.write(this.toRecogniser.push(ev.audio));
        this.notices.listening?.();
        // nothing is recognised before the end: the session learns that someone speaks (barge-in), not what
        this.events.send((l) => l.callerSpeech({ utteranceId: id, transcript: '', confidence: null, final: false }));
      } else if (ev.kind === 'audio') {
        this.utterance?.stream.write(this.toRecogniser.push(ev.audio));
      } else if (this.utterance) {
        const { id, stream } = this.utterance;
        this.utterance = null;
        const endedAt = performance.now();
        this.recognitions = this.recognitions.then(() => this.recognise(id, stream, endedAt));
      }
    }
  }

  /** A turn the caller typed (web calls): after the spoken turns still being recognised, in the order given. */
  typed(text: string): void {
    const utteranceId = `t${++this.utterances}`;
    this.recognitions = this.recognitions.then(() => {
      if (this.over) return;
      this.notices.transcript?.(text, true);
      // what was typed is exactly what was meant: confidence 1, nothing to recognise
      this.events.send((l) => l.callerSpeech({ utteranceId, transcript: text, confidence: 1, final: true, recognitionMs: null }));
    });
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
    if (r.text) this.notices.transcript?.(r.text, false);
    this.events.send((l) => l.callerSpeech({ utteranceId, transcript: r.text, confidence: r.confidence, final: true, recognitionMs }));
  }

  // ---- the agent ------------------------------------------------------------------------------------------

  play(playbackId: string, text: string, o: PlaybackOptions): void {
    if (this.over) return;
    // sentence by sentence: the first one plays while the next are rendered
    const { sentences, rest } = takeSentences(`${text} `);
    const pieces = [...sentences, ...(rest.trim() ? [rest.trim()] : [])];
    const parts = pieces.map((piece) => ({ text: piece, words: wordsOf(piece).length, audio: this.render(piece, o) }));
    this.queue.push({ id: playbackId, text, parts, part: 0, wordsDone: 0, started: false, partStartedAt: 0, partMs: 0, partSentMs: null });
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
    this.transport.clear();
    for (const id of stopped.cut) this.events.send((l) => l.playbackFinished(id));
    return stopped;
  }

  isPlaying(): boolean {
    return !this.over && this.queue.length > 0;
  }

  /** The leg is over: what plays stops (and is remembered for a last `stopPlayback`), recognition is dropped. */
  end(): void {
    if (this.over) return;
    this.stoppedAtEnd = this.queue.length > 0 ? this.whatWasHeard() : NOTHING_STOPPED;
    this.silence();
    this.over = true;
    this.utterance?.stream.abort();
    this.utterance = null;
  }

  private async render(text: string, o: PlaybackOptions): Promise<Rendered> {
    const t = performance.now();
    try {
      const pcm = await this.d.tts.synthesize(text, {
        voice: o.voice,
        ...(o.wordsPerMinute !== undefined ? { wordsPerMinute: o.wordsPerMinute } : {}),
      });
      return { samples: toRate(pcm, this.transport.sampleRate), synthesisMs: performance.now() - t };
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
            this.notices.speech?.(p.id, p.text);
            const synthesisMs = 'failed' in r ? null : r.synthesisMs;
            this.events.send((l) => l.playbackStarted?.(p.id, { synthesisMs }));
          }
          // a part the engine could not render is not heard (a page still shows its text)
          if ('failed' in r || r.samples.length === 0) {
            p.wordsDone += part.words;
            continue;
          }
          if (!(await this.stream(p, r.samples, epoch))) break;
          p.wordsDone += part.words;
        }
        if (this.epoch !== epoch || this.over) continue;
        this.queue.shift();
        if (p.started) this.notices.speechEnd?.(p.id);
        this.events.send((l) => l.playbackFinished(p.id));
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Sends one part; true once it has gone out, false when stopped. */
  private stream(p: Playback, samples: Int16Array, epoch: number): Promise<boolean> {
    p.partStartedAt = performance.now();
    p.partMs = samples.length / this.samplesPerMs;
    p.partSentMs = null;
    const out = this.transport.output;
    if (out.kind === 'queued')
      return new Promise<boolean>((resolve) => {
        const done = (played: boolean) => {
          this.streaming = null;
          resolve(played);
        };
        this.streaming = { done };
        const part = out.enqueue(samples, () => {
          if (this.epoch === epoch && !this.over) done(true);
        });
        p.partSentMs = () => part.sentSamples / this.samplesPerMs;
      });
    return this.push(out, p, samples, epoch);
  }

  /** Hands one part's frames over in real time (`leadMs` ahead); true once it has played, false when stopped. */
  private push(out: PushedOutput, p: Playback, samples: Int16Array, epoch: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const start = p.partStartedAt;
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
        const due = Math.min(samples.length, Math.ceil((elapsed + out.leadMs) * this.samplesPerMs));
        while (sent < due) {
          const end = Math.min(due, sent + this.frameSamples);
          out.send(samples.subarray(sent, end));
          sent = end;
        }
        if (elapsed >= p.partMs) done(true);
      };
      const timer = setInterval(tick, FRAME_MS);
      this.streaming = { done };
      tick();
    });
  }

  /**
   * The playbacks queued now, and what was heard of each: of the one playing, its parts played to the end and
   * the share of the current part's audio gone out so far, in words (the far end plays `playoutDelayMs` behind).
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
      const outMs = p.partSentMs ? p.partSentMs() : performance.now() - p.partStartedAt;
      const share = part && p.partMs > 0 ? Math.min(1, Math.max(0, (outMs - this.transport.playoutDelayMs) / p.partMs)) : 0;
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

  /** An engine that is missing or failing: logged with its fix, and the far end told once where it can be. */
  private speechUnavailable(err: unknown, what: 'recognition' | 'synthesis'): void {
    const message = err instanceof Error ? err.message : String(err);
    if (!(err instanceof SpeechUnavailableError)) this.d.log.error({ err, callId: this.callId }, `call ${what} failed`);
    else this.d.log.error({ callId: this.callId, fix: message }, `call ${what}: the speech engine is unavailable`);
    if (this.warned) return;
    this.warned = true;
    this.notices.unavailable?.(what, message);
  }
}

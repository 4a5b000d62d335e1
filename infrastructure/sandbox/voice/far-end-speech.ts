import { performance } from 'node:perf_hooks';
import type { LegListener } from '../../../application/calls/voice-engine.port.js';
import { confidenceOf, type Timers, wordsOf } from './timing.js';

/** One thing the far end says. */
export type Utterance = {
  readonly text: string;
  readonly words: readonly string[];
  readonly fromSandboxApi: boolean;
  /** who said it (the persona's phase): its continuation runs only while that one lasts */
  readonly speaker: unknown;
  /** what follows when it was said to the end */
  readonly afterwards: (() => void) | null;
  id: string;
  transcript: string;
  overAgent: boolean;
  startedAt: string;
  endedAt: string | null;
  startMono: number;
  timer: NodeJS.Timeout | null;
};

type Hooks = Readonly<{
  engineCallId: string;
  now: () => string;
  timers: Timers;
  msPerWord: number;
  agentPlaying: () => boolean;
  /** who speaks now (the persona's phase) */
  speaker: () => unknown;
  /** the leg is still up */
  live: () => boolean;
  send: (call: (l: LegListener) => void) => void;
}>;

/**
 * What the far end says on one leg, one utterance after another, each taking its words' time: the platform hears
 * speech detected (the first word, an interim result) when it begins and the final transcript when it ends, or the
 * words spoken so far when it is cut.
 */
export class FarEndSpeech {
  /** everything said, in order */
  readonly all: Utterance[] = [];
  private queue: Utterance[] = [];
  private current: Utterance | null = null;

  constructor(private readonly h: Hooks) {}

  get speaking(): Utterance | null {
    return this.current;
  }

  /** speaking, or about to */
  busy(): boolean {
    return this.current !== null || this.queue.length > 0;
  }

  say(text: string, o: { fromSandboxApi?: boolean; afterwards?: (() => void) | undefined } = {}): void {
    this.queue.push({
      text,
      words: wordsOf(text),
      fromSandboxApi: o.fromSandboxApi ?? false,
      speaker: this.h.speaker(),
      afterwards: o.afterwards ?? null,
      id: '',
      transcript: '',
      overAgent: false,
      startedAt: '',
      endedAt: null,
      startMono: 0,
      timer: null,
    });
    if (!this.current) this.startNext();
  }

  private startNext(): void {
    const u = this.queue.shift();
    if (!u) return;
    u.id = `${this.h.engineCallId}-u${this.all.length + 1}`;
    u.overAgent = this.h.agentPlaying();
    u.startedAt = this.h.now();
    u.startMono = performance.now();
    this.current = u;
    this.all.push(u);
    // speech detected: the first word, with an interim result's lower confidence
    const interim = {
      utteranceId: u.id,
      transcript: u.words[0] ?? '',
      confidence: Math.round(confidenceOf(u.words.length) * 60) / 100,
      final: false,
    };
    this.h.send((l) => l.callerSpeech(interim));
    u.timer = this.h.timers.after(u.words.length * this.h.msPerWord, () => this.finish(u, performance.now(), false));
  }

  spokenWords(u: Utterance, mono: number): number {
    return Math.min(u.words.length, Math.floor((mono - u.startMono) / this.h.msPerWord));
  }

  /** What has been said of `u` so far. */
  transcriptNow(u: Utterance): string {
    return u.endedAt === null ? u.words.slice(0, this.spokenWords(u, performance.now())).join(' ') : u.transcript;
  }

  /** The utterance's final transcript: all of it, or (cut) the words spoken so far, at least the first already reported. */
  private finish(u: Utterance, mono: number, cut: boolean): void {
    if (this.current !== u) return;
    this.h.timers.cancel(u.timer);
    u.timer = null;
    const n = cut ? Math.max(1, this.spokenWords(u, mono)) : u.words.length;
    u.transcript = u.words.slice(0, n).join(' ');
    u.endedAt = this.h.now();
    this.current = null;
    const final = { utteranceId: u.id, transcript: u.transcript, confidence: confidenceOf(n), final: true };
    this.h.send((l) => l.callerSpeech(final));
    if (cut || !this.h.live()) return;
    if (u.afterwards && u.speaker === this.h.speaker()) u.afterwards();
    if (!this.current && this.h.live()) this.startNext();
  }

  /** Cuts what the persona is saying and drops what it was about to say (the sandbox API's speech goes on). */
  cutPersona(): void {
    if (this.current && !this.current.fromSandboxApi) this.finish(this.current, performance.now(), true);
    this.queue = this.queue.filter((u) => u.fromSandboxApi);
  }

  /** The call ends: what is being said is cut where it is, nothing more is said. */
  stop(mono: number): void {
    if (this.current) this.finish(this.current, mono, true);
    this.queue = [];
  }
}

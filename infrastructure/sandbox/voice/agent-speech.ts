import { performance } from 'node:perf_hooks';
import type { PlaybackOptions, StoppedPlayback } from '../../../application/calls/voice-engine.port.js';
import { msPerWordAt, type Timers, wordsOf } from './timing.js';
import type { PlaybackState } from './types.js';

export const NOTHING_STOPPED: StoppedPlayback = { cut: [], heard: {} };

/** One agent playback, from the far end's side. */
export type Playback = {
  readonly id: string;
  readonly text: string;
  readonly words: readonly string[];
  readonly voice: string;
  readonly wordsPerMinute: number;
  readonly msPerWord: number;
  readonly queuedAt: string;
  state: PlaybackState;
  heard: string;
  startedAt: string | null;
  endedAt: string | null;
  startMono: number | null;
  /** the timer that ends it naturally */
  timer: NodeJS.Timeout | null;
  /** a persona's cue inside it (the interrupter's, the backchanneler's) */
  cue: NodeJS.Timeout | null;
  /** voicemail: the first word recorded (the words before the beep are not) */
  recordFrom: number | null;
  /** screener: spoken while the screener listened */
  screened: boolean;
};

type Hooks = Readonly<{
  now: () => string;
  /** the network's timers (a playback's natural end) and the persona's (its cues inside a playback) */
  mechanics: Timers;
  cues: Timers;
  /** a playback began */
  started: (p: Playback) => void;
  /** a playback played to its end (not cut) */
  finished: (p: Playback) => void;
}>;

/**
 * The agent's speech on one leg: playbacks queue and play one after another, each taking its words' time at its
 * rate. What was heard of a playback is measured on the monotonic clock, so a cut reports exactly the words spoken
 * before it.
 */
export class AgentSpeech {
  /** every playback, in order */
  readonly all: Playback[] = [];
  private queue: Playback[] = [];
  private playing: Playback | null = null;

  constructor(
    private readonly defaultWordsPerMinute: number,
    private readonly h: Hooks,
  ) {}

  get current(): Playback | null {
    return this.playing;
  }

  isPlaying(): boolean {
    return this.playing !== null || this.queue.length > 0;
  }

  hasQueued(): boolean {
    return this.queue.length > 0;
  }

  enqueue(playbackId: string, text: string, o: PlaybackOptions): void {
    const wordsPerMinute = o.wordsPerMinute !== undefined && o.wordsPerMinute > 0 ? o.wordsPerMinute : this.defaultWordsPerMinute;
    const p: Playback = {
      id: playbackId,
      text,
      words: wordsOf(text),
      voice: o.voice,
      wordsPerMinute,
      msPerWord: msPerWordAt(wordsPerMinute),
      queuedAt: this.h.now(),
      state: 'queued',
      heard: '',
      startedAt: null,
      endedAt: null,
      startMono: null,
      timer: null,
      cue: null,
      recordFrom: null,
      screened: false,
    };
    this.all.push(p);
    this.queue.push(p);
  }

  startNext(): void {
    const p = this.queue.shift();
    if (!p) return;
    this.playing = p;
    p.state = 'playing';
    p.startedAt = this.h.now();
    p.startMono = performance.now();
    p.timer = this.h.mechanics.after(p.words.length * p.msPerWord, () => this.finish(p));
    this.h.started(p);
  }

  private finish(p: Playback): void {
    if (this.playing !== p) return;
    p.timer = null;
    this.h.cues.cancel(p.cue);
    p.cue = null;
    p.state = 'finished';
    p.heard = p.words.join(' ');
    p.endedAt = this.h.now();
    this.playing = null;
    this.h.finished(p);
  }

  /** Words of `p` fully spoken at `mono`. */
  heardWords(p: Playback, mono: number): number {
    if (p.startMono === null) return 0;
    return Math.min(p.words.length, Math.floor((mono - p.startMono) / p.msPerWord));
  }

  /** What the far end has heard of `p` so far. */
  heardNow(p: Playback): string {
    return p.state === 'playing' ? p.words.slice(0, this.heardWords(p, performance.now())).join(' ') : p.heard;
  }

  /**
   * Stops the agent's speech at `mono`: the current playback is cut after the words spoken so far (or counts as
   * finished when its time is up and only its timer has not run yet), the queue is dropped.
   */
  settle(mono: number): { finished: Playback | null; stopped: StoppedPlayback } {
    const cut: string[] = [];
    const heard: Record<string, string> = {};
    let finished: Playback | null = null;
    const at = this.h.now();
    const p = this.playing;
    if (p) {
      this.h.mechanics.cancel(p.timer);
      this.h.cues.cancel(p.cue);
      p.timer = null;
      p.cue = null;
      const n = this.heardWords(p, mono);
      p.heard = p.words.slice(0, n).join(' ');
      p.endedAt = at;
      if (n >= p.words.length) {
        p.state = 'finished';
        finished = p;
      } else {
        p.state = 'cut';
        cut.push(p.id);
        heard[p.id] = p.heard;
      }
    }
    for (const q of this.queue) {
      q.state = 'dropped';
      q.endedAt = at;
      cut.push(q.id);
      heard[q.id] = '';
    }
    this.playing = null;
    this.queue = [];
    return { finished, stopped: { cut, heard } };
  }
}

/**
 * Where a caller's utterances start and end, from the energy of the audio (docs/calls.md#speech-and-turns). The
 * server decides this, as the phone network's side does on a phone call: the same rule for every page, one clock
 * for barge-in and turn ends, and no page can hold a turn open.
 *
 * The audio is cut into 20 ms frames; each frame's level is its RMS in dBFS. A noise floor follows the quietest
 * frames: it starts as the quietest of the first 300 ms (when nothing starts), then goes down at once and up slowly
 * (3 dB a second), so a change of background becomes the floor within seconds while the pauses between words keep
 * it low during speech. A frame is voiced when it is 15 dB over the floor (and over
 * -55 dBFS); an utterance starts after 80 ms of voiced frames, and ends after `endSilenceMs` without a voiced frame
 * (6 dB less counts as voiced once speech has started). What came just before the start (300 ms) goes with it,
 * so the recogniser hears the first sound whole. An utterance is cut at `maxUtteranceMs`.
 */

import { concatAudio } from './audio.js';
export type EndpointerOptions = Readonly<{
  sampleRate: number;
  endSilenceMs: number;
  maxUtteranceMs?: number;
}>;

export type EndpointEvent =
  /** an utterance started: `audio` is what led up to it and its first voiced frames */
  | Readonly<{ kind: 'start'; audio: Int16Array }>
  /** more of the utterance (the silence after it included, until its end) */
  | Readonly<{ kind: 'audio'; audio: Int16Array }>
  /** the utterance is over */
  | Readonly<{ kind: 'end'; reason: 'silence' | 'max-length' }>;

export const FRAME_MS = 20;
const START_MS = 80;
const PRE_ROLL_MS = 300;
const OVER_FLOOR_DB = 15;
const HOLD_DB = 6;
const MIN_ON_DB = -55;
const FLOOR_RISE_DB_PER_S = 3;
const FLOOR_MIN_DB = -90;
const FLOOR_MAX_DB = -25;
const CALIBRATION_MS = 300;

/** A frame's level: its RMS in dB relative to full scale (-100 for digital silence). */
export function levelDb(frame: Int16Array): number {
  if (frame.length === 0) return -100;
  let sum = 0;
  for (const s of frame) sum += s * s;
  const rms = Math.sqrt(sum / frame.length) / 32768;
  return rms > 0 ? Math.max(-100, 20 * Math.log10(rms)) : -100;
}

export class Endpointer {
  private readonly frameSamples: number;
  private readonly maxUtteranceMs: number;
  private carry = new Int16Array(0);
  private floorDb = 0;
  private calibratedMs = 0;
  private speaking = false;
  private voicedMs = 0;
  private silentMs = 0;
  private utteranceMs = 0;
  /** the latest frames before an utterance (the pre-roll) */
  private recent: Int16Array[] = [];

  constructor(private readonly o: EndpointerOptions) {
    this.frameSamples = Math.round((o.sampleRate * FRAME_MS) / 1000);
    this.maxUtteranceMs = o.maxUtteranceMs ?? 30_000;
  }

  /** whether an utterance is going on */
  get inUtterance(): boolean {
    return this.speaking;
  }

  /** Feeds samples (any length); answers what happened, in order. */
  push(samples: Int16Array): EndpointEvent[] {
    const all = new Int16Array(this.carry.length + samples.length);
    all.set(this.carry);
    all.set(samples, this.carry.length);
    const out: EndpointEvent[] = [];
    let at = 0;
    for (; at + this.frameSamples <= all.length; at += this.frameSamples) this.frame(all.slice(at, at + this.frameSamples), out);
    this.carry = all.slice(at);
    return out;
  }

  private frame(frame: Int16Array, out: EndpointEvent[]): void {
    const level = levelDb(frame);
    if (this.calibratedMs < CALIBRATION_MS) {
      // the first moments of the microphone: what it hears before anyone speaks is the floor
      this.floorDb = this.calibratedMs === 0 ? level : Math.min(this.floorDb, level);
      this.floorDb = Math.min(FLOOR_MAX_DB, Math.max(FLOOR_MIN_DB, this.floorDb));
      this.calibratedMs += FRAME_MS;
      this.recent.push(frame);
      if (this.recent.length > PRE_ROLL_MS / FRAME_MS) this.recent.shift();
      return;
    }
    const on = Math.max(this.floorDb + OVER_FLOOR_DB, MIN_ON_DB);
    const voiced = level > (this.speaking ? on - HOLD_DB : on);
    this.floorDb =
      level < this.floorDb ? Math.max(FLOOR_MIN_DB, level) : Math.min(FLOOR_MAX_DB, this.floorDb + (FLOOR_RISE_DB_PER_S * FRAME_MS) / 1000);

    if (!this.speaking) {
      this.recent.push(frame);
      if (this.recent.length > PRE_ROLL_MS / FRAME_MS) this.recent.shift();
      this.voicedMs = voiced ? this.voicedMs + FRAME_MS : 0;
      if (this.voicedMs < START_MS) return;
      this.speaking = true;
      this.silentMs = 0;
      this.utteranceMs = this.recent.length * FRAME_MS;
      out.push({ kind: 'start', audio: concatAudio(this.recent) });
      this.recent = [];
      return;
    }
    out.push({ kind: 'audio', audio: frame });
    this.utteranceMs += FRAME_MS;
    this.silentMs = voiced ? 0 : this.silentMs + FRAME_MS;
    const reason = this.silentMs >= this.o.endSilenceMs ? 'silence' : this.utteranceMs >= this.maxUtteranceMs ? 'max-length' : null;
    if (reason === null) return;
    this.speaking = false;
    this.voicedMs = 0;
    out.push({ kind: 'end', reason });
  }
}

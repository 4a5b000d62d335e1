import { performance } from 'node:perf_hooks';
import { encodeWav } from '../speech/wav.js';

/** G.711's rate: what both legs of a bridge carry */
const RATE = 8000;

/** One side's audio: frames placed on a common timeline of samples from the bridge's start. */
class Track {
  private readonly frames: { at: number; samples: Int16Array }[] = [];
  /** where the next frame goes when it follows the last without a gap */
  private cursor = 0;

  add(samples: Int16Array, nowSample: number): void {
    // frames come as packets arrive (lost ones as silence): a frame follows the last one, unless the line went quiet
    // for longer than a frame (no packets at all), when it goes where the clock says, so both sides stay in step
    const at = nowSample - this.cursor > samples.length ? nowSample : this.cursor;
    this.frames.push({ at, samples: samples.slice() });
    this.cursor = at + samples.length;
  }

  get end(): number {
    return this.cursor;
  }

  mixInto(out: Int32Array): void {
    for (const { at, samples } of this.frames) for (let i = 0; i < samples.length && at + i < out.length; i++) out[at + i]! += samples[i]!;
  }
}

/**
 * The audio of a bridged call (docs/sip.md#recording-bridged-calls): both directions as the platform relays them,
 * mixed into one mono 8 kHz WAV, from the moment the far end answered. Each side's 20 ms frames are placed by the
 * packet clock: a frame follows the one before it, and after a gap with no packets it is placed at the time it came,
 * so the two sides stay aligned within a frame.
 */
export class BridgeRecorder {
  private readonly start: number;
  private readonly sides = { caller: new Track(), far: new Track() };

  /** `clock`: milliseconds, monotonic (the packet clock's) */
  constructor(private readonly clock: () => number = () => performance.now()) {
    this.start = clock();
  }

  caller(samples: Int16Array): void {
    this.sides.caller.add(samples, this.now());
  }

  far(samples: Int16Array): void {
    this.sides.far.add(samples, this.now());
  }

  /** The WAV so far, and its length; null when no audio came from either side. */
  wav(): { wav: Uint8Array; durationMs: number } | null {
    const length = Math.max(this.sides.caller.end, this.sides.far.end);
    if (length === 0) return null;
    const sum = new Int32Array(length);
    this.sides.caller.mixInto(sum);
    this.sides.far.mixInto(sum);
    const samples = new Int16Array(length);
    for (let i = 0; i < length; i++) samples[i] = Math.max(-32768, Math.min(32767, sum[i]!));
    return { wav: encodeWav({ samples, sampleRate: RATE }), durationMs: Math.round((length * 1000) / RATE) };
  }

  private now(): number {
    return Math.round(((this.clock() - this.start) * RATE) / 1000);
  }
}

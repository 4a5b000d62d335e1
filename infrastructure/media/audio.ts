import type { Pcm } from '../../application/calls/text-to-speech.port.js';
import { resample } from '../speech/wav.js';

/**
 * Sample-rate changes of the media pipeline (docs/calls.md#the-media-pipeline): speech rendered at the engine's
 * rate goes down to a phone line's 8 kHz, and a phone line's audio goes up to the recogniser's 16 kHz.
 */

/** taps of the anti-aliasing filter applied before going down in rate */
const TAPS = 31;

/**
 * `pcm` at `sampleRate`. Going down, a windowed-sinc low-pass at the new rate's Nyquist frequency comes first,
 * so the engines' 22.05 or 24 kHz speech does not fold its upper band into a phone line's 0-4 kHz.
 */
/** The samples of `parts`, one after the other. */
export function concatAudio(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function toRate(pcm: Pcm, sampleRate: number): Int16Array {
  if (pcm.sampleRate <= sampleRate || pcm.samples.length === 0) return resample(pcm, sampleRate).samples;
  return resample({ samples: lowPass(pcm.samples, (0.45 * sampleRate) / pcm.sampleRate), sampleRate: pcm.sampleRate }, sampleRate).samples;
}

/** A low-pass FIR (Blackman-windowed sinc) with its cut-off at `cutoff` of the sample rate (0-0.5). */
export function lowPass(samples: Int16Array, cutoff: number): Int16Array {
  const half = (TAPS - 1) / 2;
  const h = new Float64Array(TAPS);
  let sum = 0;
  for (let i = 0; i < TAPS; i++) {
    const n = i - half;
    const sinc = n === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * n) / (Math.PI * n);
    const w = 0.42 - 0.5 * Math.cos((2 * Math.PI * i) / (TAPS - 1)) + 0.08 * Math.cos((4 * Math.PI * i) / (TAPS - 1));
    h[i] = sinc * w;
    sum += h[i]!;
  }
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    let acc = 0;
    for (let k = 0; k < TAPS; k++) {
      const j = i + k - half;
      if (j >= 0 && j < samples.length) acc += samples[j]! * h[k]!;
    }
    out[i] = Math.max(-32768, Math.min(32767, Math.round(acc / sum)));
  }
  return out;
}

/**
 * Raises a stream's rate by a whole factor, chunk by chunk, interpolating linearly between the last sample of
 * one chunk and the first of the next (so 20 ms frames join without a click). Other ratios resample each chunk.
 */
export class Upsampler {
  private last = 0;
  private readonly factor: number | null;

  constructor(
    private readonly from: number,
    private readonly to: number,
  ) {
    this.factor = to % from === 0 ? to / from : null;
  }

  push(samples: Int16Array): Int16Array {
    if (this.from === this.to) return samples;
    if (this.factor === null) return resample({ samples, sampleRate: this.from }, this.to).samples;
    const k = this.factor;
    const out = new Int16Array(samples.length * k);
    let prev = this.last;
    for (let i = 0; i < samples.length; i++) {
      const s = samples[i]!;
      for (let j = 0; j < k; j++) out[i * k + j] = Math.round(prev + ((s - prev) * (j + 1)) / k);
      prev = s;
    }
    this.last = prev;
    return out;
  }
}

/**
 * Whether a known piece of speech is in a phone's recording (docs/testing.md#sip-tests), judged by the audio itself,
 * not by a transcript (the offline recogniser is too weak on 8 kHz telephone audio to be the judge).
 *
 * The platform renders the agent's words with the same engine and voice the test renders its reference with, and
 * G.711 keeps the waveform (its quantisation only adds a little noise), so what a phone heard is the reference,
 * moved in time: it starts somewhere in the recording, a stalled sender or the phone's jitter buffer may have put a
 * gap in it or dropped a frame, and a hang-up may cut its last syllable. So the reference's speech is cut into
 * 100 ms pieces, and each piece is looked for in the recording near where the previous one was found (within a
 * second either way), by the normalised cross-correlation of the waveforms. Found is a correlation of at least 0.9:
 * the same waveform scores about 1.0, different words in the same voice stay well below (a vowel's period matches a
 * little at best), and silence or noise near 0. `found` is the share of the reference's pieces found, in order.
 */
export type SpeechMatch = Readonly<{
  /** the share of the reference's speech pieces found in the recording (0-1) */
  found: number;
  /** the pieces of the reference that hold speech */
  pieces: number;
  /** where in the recording the reference's speech starts (ms), null when not found */
  startMs: number | null;
  /** each change of the reference's place in the recording (ms; positive: a gap came in, negative: audio was lost) */
  shiftsMs: readonly number[];
}>;

const RATE = 8000;
/** the pieces looked for: 100 ms */
const PIECE = RATE / 10;
/** the envelope used to find the reference's place roughly: 10 ms frames */
const FRAME = RATE / 100;
/** how far from where it is expected a piece is looked for: 1 s either way */
const SEARCH = RATE;
/** the correlation from which a piece counts as found */
export const FOUND_AT = 0.9;

export function findSpeech(recording: Int16Array, reference: Int16Array): SpeechMatch {
  const span = speechSpan(reference);
  if (!span) return { found: 0, pieces: 0, startMs: null, shiftsMs: [] };
  const floor = span.threshold * Math.sqrt(PIECE);
  const pieces: number[] = [];
  for (let at = span.start; at + PIECE <= span.end; at += PIECE) if (norm(reference, at, PIECE) >= floor) pieces.push(at);
  if (pieces.length === 0 || recording.length < PIECE) return { found: 0, pieces: pieces.length, startMs: null, shiftsMs: [] };
  const energy = prefixEnergy(recording);
  let lag = roughLag(recording, reference, span);
  let matched = 0;
  let startMs: number | null = null;
  const shiftsMs: number[] = [];
  for (const at of pieces) {
    const refNorm = norm(reference, at, PIECE);
    const from = Math.max(0, at + lag - SEARCH);
    const to = Math.min(recording.length - PIECE, at + lag + SEARCH);
    let best = -1;
    let bestAt = -1;
    for (let pos = from; pos <= to; pos++) {
      const e = energy[pos + PIECE]! - energy[pos]!;
      if (e <= 0) continue;
      let dot = 0;
      for (let i = 0; i < PIECE; i++) dot += recording[pos + i]! * reference[at + i]!;
      const score = dot / (Math.sqrt(e) * refNorm);
      if (score > best) {
        best = score;
        bestAt = pos;
      }
    }
    if (best < FOUND_AT) continue;
    matched++;
    if (startMs === null) startMs = ((bestAt - (at - span.start)) * 1000) / RATE;
    else if (bestAt - at !== lag) shiftsMs.push(((bestAt - at - lag) * 1000) / RATE);
    lag = bestAt - at;
  }
  return { found: matched / pieces.length, pieces: pieces.length, startMs, shiftsMs };
}

/** Where the speech of `samples` starts and ends (frames within 30 dB of its loudest), and that level. */
function speechSpan(samples: Int16Array): { start: number; end: number; threshold: number } | null {
  const env = envelope(samples);
  let peak = 0;
  for (const v of env) peak = Math.max(peak, v);
  if (peak < 100) return null;
  const threshold = peak / 31.6;
  const first = env.findIndex((v) => v >= threshold);
  let last = env.length - 1;
  while (last > first && env[last]! < threshold) last--;
  return { start: first * FRAME, end: (last + 1) * FRAME, threshold };
}

/** The RMS of each 10 ms frame. */
function envelope(samples: Int16Array): Float64Array {
  const out = new Float64Array(Math.floor(samples.length / FRAME));
  for (let f = 0; f < out.length; f++) {
    let sum = 0;
    for (let i = f * FRAME; i < (f + 1) * FRAME; i++) sum += samples[i]! ** 2;
    out[f] = Math.sqrt(sum / FRAME);
  }
  return out;
}

/**
 * The recording's offset of the reference's speech, roughly: the best normalised correlation of the two envelopes,
 * letting the reference run past the end of the recording by half its length (a hang-up cut it).
 */
function roughLag(recording: Int16Array, reference: Int16Array, span: { start: number; end: number }): number {
  const a = envelope(recording);
  const b = envelope(reference).subarray(span.start / FRAME, span.end / FRAME);
  let best = -Infinity;
  let bestOff = 0;
  for (let off = 0; off + Math.ceil(b.length / 2) <= a.length; off++) {
    const n = Math.min(b.length, a.length - off);
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let i = 0; i < n; i++) {
      ab += a[off + i]! * b[i]!;
      aa += a[off + i]! ** 2;
      bb += b[i]! ** 2;
    }
    const score = aa > 0 ? ab / Math.sqrt(aa * bb) : 0;
    if (score > best) {
      best = score;
      bestOff = off;
    }
  }
  return bestOff * FRAME - span.start;
}

function norm(samples: Int16Array, at: number, n: number): number {
  let sum = 0;
  for (let i = at; i < at + n; i++) sum += samples[i]! ** 2;
  return Math.sqrt(sum);
}

/** energy[i] = the sum of squares of the first i samples, for the energy of any window in constant time */
function prefixEnergy(samples: Int16Array): Float64Array {
  const out = new Float64Array(samples.length + 1);
  for (let i = 0; i < samples.length; i++) out[i + 1] = out[i]! + samples[i]! ** 2;
  return out;
}

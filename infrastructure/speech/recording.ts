import type { TextToSpeechPort } from '../../application/calls/text-to-speech.port.js';
import { encodeWav, resample } from './wav.js';

/** One utterance of a call, placed `atMs` after the call started (docs/speech.md#recordings). */
export type RecordingTurn = Readonly<{
  speaker: 'agent' | 'caller';
  text: string;
  /** a catalogue voice id */
  voice: string;
  /** offset from the call's start */
  atMs: number;
  /** the speaker was interrupted: only the first N words were heard (null or absent: all of them) */
  cutAfterWords?: number | null;
}>;

export type RecordingOptions = Readonly<{
  /** the recording's rate; each turn's audio is resampled to it */
  sampleRate?: number;
  /** speaking speed given to the engine: the one the call's timings were made with */
  wordsPerMinute?: number;
}>;

export type Recording = Readonly<{ wav: Buffer; durationMs: number; sampleRate: number }>;

/** wide-band telephone audio */
export const RECORDING_SAMPLE_RATE = 16_000;

/** The voices a caller turn falls back to, in order, when its own voice is one the agent speaks in. */
const CALLER_VOICES = ['sandbox-miles', 'sandbox-aria', 'sandbox-isla', 'sandbox-arjun', 'sandbox-sol'] as const;

/** a sample this loud or louder is speech, not the engine's leading or trailing silence (about -40 dBFS) */
const SPEECH_THRESHOLD = 330;
/** an interrupted turn fades out over this long rather than ending on a click */
const CUT_FADE_MS = 10;

/**
 * Renders a call's turns into one mono WAV: each turn synthesised (a caller turn never in a voice the agent
 * uses), resampled to one rate, placed at its offset, overlapping turns mixed and clipped to 16 bits. An
 * interrupted turn keeps the share of its speech that its heard words take of its text.
 */
export async function renderRecording(
  tts: TextToSpeechPort,
  turns: readonly RecordingTurn[],
  o: RecordingOptions = {},
): Promise<Recording> {
  if (turns.length === 0) throw new Error('no speech to record');
  const sampleRate = o.sampleRate ?? RECORDING_SAMPLE_RATE;
  const agentVoices = new Set(turns.filter((t) => t.speaker === 'agent').map((t) => t.voice));
  const callerVoice = (voice: string) => (agentVoices.has(voice) ? (CALLER_VOICES.find((v) => !agentVoices.has(v)) ?? voice) : voice);

  const placed = await Promise.all(
    turns.map(async (t) => {
      if (!Number.isFinite(t.atMs) || t.atMs < 0) throw new RangeError(`turn offset must be a non-negative number of ms, got ${t.atMs}`);
      const share = heardShare(t.text, t.cutAfterWords ?? null);
      if (share === 0) return null;
      const voice = t.speaker === 'caller' ? callerVoice(t.voice) : t.voice;
      const speech = await tts.synthesize(t.text, o.wordsPerMinute === undefined ? { voice } : { voice, wordsPerMinute: o.wordsPerMinute });
      const audio = resample(speech, sampleRate).samples;
      return { at: Math.round((t.atMs * sampleRate) / 1000), samples: share === 1 ? audio : cut(audio, share, sampleRate) };
    }),
  );

  const heard = placed.filter((p) => p !== null && p.samples.length > 0) as { at: number; samples: Int16Array }[];
  if (heard.length === 0) throw new Error('no speech to record');
  const length = Math.max(...heard.map((p) => p.at + p.samples.length));
  const samples = new Int16Array(length); // mixed in place, each sum clipped: an hour is 115 MB at 16 kHz already
  for (const p of heard) {
    p.samples.forEach((s, i) => {
      const sum = samples[p.at + i]! + s;
      samples[p.at + i] = sum > 32767 ? 32767 : sum < -32768 ? -32768 : sum;
    });
  }
  return { wav: encodeWav({ samples, sampleRate }), durationMs: Math.round((length * 1000) / sampleRate), sampleRate };
}

/** The share of the text's letters (and the spaces between them) in its first `cutAfterWords` words: 0 to 1. */
function heardShare(text: string, cutAfterWords: number | null): number {
  const words = text
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '');
  if (cutAfterWords === null || cutAfterWords >= words.length) return 1;
  if (cutAfterWords <= 0) return 0;
  return words.slice(0, cutAfterWords).join(' ').length / words.join(' ').length;
}

/** Keeps `share` of the speech between its first and last loud sample, then fades out. */
function cut(audio: Int16Array, share: number, sampleRate: number): Int16Array {
  let first = 0;
  while (first < audio.length && Math.abs(audio[first]!) < SPEECH_THRESHOLD) first++;
  let last = audio.length - 1;
  while (last > first && Math.abs(audio[last]!) < SPEECH_THRESHOLD) last--;
  if (first >= audio.length) return audio.subarray(0, Math.round(audio.length * share)); // no speech found: cut by time
  const kept = audio.slice(0, first + Math.round((last - first) * share));
  const fade = Math.min(kept.length, Math.round((CUT_FADE_MS * sampleRate) / 1000));
  for (let i = 0; i < fade; i++) {
    const at = kept.length - fade + i;
    kept[at] = Math.round(kept[at]! * ((fade - i - 1) / fade));
  }
  return kept;
}

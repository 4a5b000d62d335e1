import type { Pcm } from '../../application/calls/text-to-speech.port.js';

/**
 * RIFF/WAVE, 16-bit PCM only (docs/speech.md#wav). Written here rather than with `wavefile`: that library
 * unpacks sample by sample (about 0.4 s a way for two minutes of 24 kHz audio, so seconds of a blocked event
 * loop for an hour-long call), where a typed-array view over the bytes is a copy.
 */

export class WavFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WavFormatError';
  }
}

const WAVE_FORMAT_PCM = 0x0001;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
const HEADER_BYTES = 44;

const fourCc = (b: Uint8Array, at: number) => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);

/**
 * Reads a WAV into mono samples. A stream-written file (espeak-ng's `--stdout`, a streamed speech API answer)
 * cannot go back to fill in its sizes, so it declares 0x7ffff000 or 0xffffffff: a data chunk that claims more
 * bytes than follow is read to the end of the buffer. Several channels are averaged into one.
 */
export function decodeWav(bytes: Uint8Array): Pcm {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12 || fourCc(bytes, 0) !== 'RIFF' || fourCc(bytes, 8) !== 'WAVE') {
    throw new WavFormatError('not a RIFF/WAVE file');
  }
  let format: { channels: number; sampleRate: number } | null = null;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = fourCc(bytes, at);
    const declared = view.getUint32(at + 4, true);
    const body = at + 8;
    const size = Math.min(declared, bytes.length - body);
    if (id === 'fmt ') {
      if (size < 16) throw new WavFormatError('fmt chunk is too short');
      let tag = view.getUint16(body, true);
      if (tag === WAVE_FORMAT_EXTENSIBLE && size >= 26) tag = view.getUint16(body + 24, true); // the sub-format GUID's first two bytes
      const channels = view.getUint16(body + 2, true);
      const sampleRate = view.getUint32(body + 4, true);
      const bits = view.getUint16(body + 14, true);
      if (tag !== WAVE_FORMAT_PCM) throw new WavFormatError(`unsupported WAV encoding 0x${tag.toString(16)} (16-bit PCM only)`);
      if (bits !== 16) throw new WavFormatError(`unsupported WAV sample size ${bits} bits (16-bit PCM only)`);
      if (channels < 1 || sampleRate < 1) throw new WavFormatError(`invalid WAV format: ${channels} channels at ${sampleRate} Hz`);
      format = { channels, sampleRate };
    } else if (id === 'data') {
      if (!format) throw new WavFormatError('WAV data chunk comes before its fmt chunk');
      return { samples: downmix(view, body, size, format.channels), sampleRate: format.sampleRate };
    }
    at = body + declared + (declared % 2); // chunks are padded to an even length
  }
  throw new WavFormatError(format ? 'WAV has no data chunk' : 'WAV has no fmt chunk');
}

function downmix(view: DataView, from: number, size: number, channels: number): Int16Array {
  const frames = Math.floor(size / (2 * channels)); // a trailing partial frame of a cut-off stream is dropped
  const out = new Int16Array(frames);
  for (let f = 0, at = from; f < frames; f++) {
    let sum = 0;
    for (let c = 0; c < channels; c++, at += 2) sum += view.getInt16(at, true);
    out[f] = Math.round(sum / channels);
  }
  return out;
}

/** Writes mono 16-bit PCM as a canonical 44-byte-header WAV. */
export function encodeWav(pcm: Pcm): Buffer {
  const dataBytes = pcm.samples.length * 2;
  const out = Buffer.alloc(HEADER_BYTES + dataBytes);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(HEADER_BYTES - 8 + dataBytes, 4);
  out.write('WAVE', 8, 'ascii');
  out.write('fmt ', 12, 'ascii');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(WAVE_FORMAT_PCM, 20);
  out.writeUInt16LE(1, 22); // channels
  out.writeUInt32LE(pcm.sampleRate, 24);
  out.writeUInt32LE(pcm.sampleRate * 2, 28); // bytes a second
  out.writeUInt16LE(2, 32); // bytes a frame
  out.writeUInt16LE(16, 34);
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(dataBytes, 40);
  const view = new DataView(out.buffer, out.byteOffset + HEADER_BYTES, dataBytes);
  for (let i = 0; i < pcm.samples.length; i++) view.setInt16(i * 2, pcm.samples[i]!, true);
  return out;
}

/**
 * Linear interpolation to `sampleRate`; the duration is kept (the length scales with the rate). Speech from
 * the engines is 22.05 or 24 kHz, recordings are at most that, so there is no low-pass filter.
 */
export function resample(pcm: Pcm, sampleRate: number): Pcm {
  if (!Number.isInteger(sampleRate) || sampleRate < 1) throw new RangeError(`invalid sample rate ${sampleRate}`);
  if (pcm.sampleRate === sampleRate || pcm.samples.length === 0) {
    return { samples: pcm.samples, sampleRate };
  }
  const src = pcm.samples;
  const length = Math.max(1, Math.round((src.length * sampleRate) / pcm.sampleRate));
  const step = pcm.sampleRate / sampleRate;
  const last = src.length - 1;
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) {
    const x = i * step;
    const i0 = Math.min(Math.floor(x), last);
    const a = src[i0]!;
    const b = src[Math.min(i0 + 1, last)]!;
    out[i] = Math.round(a + (b - a) * (x - i0));
  }
  return { samples: out, sampleRate };
}

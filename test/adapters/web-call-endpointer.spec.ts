import { expect } from 'chai';
import { concatAudio } from '../../infrastructure/media/audio.js';
import { type EndpointEvent, Endpointer, levelDb } from '../../infrastructure/media/endpointer.js';

const RATE = 16_000;
/** `ms` of a 220 Hz tone at `db` dBFS (RMS), or of silence */
const tone = (ms: number, db: number) => {
  const n = Math.round((ms * RATE) / 1000);
  const peak = 32768 * 10 ** (db / 20) * Math.SQRT2;
  return Int16Array.from({ length: n }, (_, i) => Math.round(peak * Math.sin((2 * Math.PI * 220 * i) / RATE)));
};
const quiet = (ms: number) => new Int16Array(Math.round((ms * RATE) / 1000));
/** deterministic noise at about `db` dBFS */
const noise = (ms: number, db: number) => {
  let x = 12345;
  const amp = 32768 * 10 ** (db / 20) * Math.sqrt(3);
  return Int16Array.from({ length: Math.round((ms * RATE) / 1000) }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return Math.round((x / 2 ** 31 - 0.5) * 2 * amp);
  });
};

/** Feeds in chunks of odd sizes (as a page's frames may be) and sums up what happened. */
function run(samples: Int16Array, endSilenceMs = 500) {
  const e = new Endpointer({ sampleRate: RATE, endSilenceMs });
  const events: EndpointEvent[] = [];
  for (let at = 0; at < samples.length; at += 333) events.push(...e.push(samples.subarray(at, at + 333)));
  const kinds = events.filter((x) => x.kind !== 'audio').map((x) => (x.kind === 'end' ? `end:${x.reason}` : x.kind));
  /** samples handed over per utterance (start's pre-roll and the audio until its end) */
  const lengths: number[] = [];
  for (const x of events) {
    if (x.kind === 'start') lengths.push(x.audio.length);
    else if (x.kind === 'audio') lengths[lengths.length - 1]! += x.audio.length;
  }
  return { kinds, ms: lengths.map((n) => (n * 1000) / RATE) };
}

/** The server's end-of-utterance rule (docs/calls.md#speech-and-turns). */
describe('the web-call endpointer', () => {
  it('measures levels in dBFS', () => {
    expect(levelDb(tone(100, -20))).to.be.closeTo(-20, 0.2);
    expect(levelDb(quiet(20))).to.equal(-100);
  });

  it('finds one utterance in speech between silences, with what led up to it and the silence that ended it', () => {
    const r = run(concatAudio([quiet(1000), tone(1000, -20), quiet(1500)]));
    expect(r.kinds).to.deep.equal(['start', 'end:silence']);
    // the 300 ms up to the start (220 ms of silence and the 80 ms of speech that started it), the other 920 ms of
    // speech, and the 500 ms of silence that ended it
    expect(r.ms).to.deep.equal([1720]);
  });

  it('ignores a click shorter than 80 ms, and silence', () => {
    expect(run(concatAudio([quiet(600), tone(40, -10), quiet(1000)])).kinds).to.deep.equal([]);
    expect(run(quiet(3000)).kinds).to.deep.equal([]);
  });

  it('keeps a pause shorter than the end silence inside the utterance; a longer one ends it', () => {
    expect(run(concatAudio([quiet(500), tone(400, -20), quiet(300), tone(400, -20), quiet(800)])).kinds).to.deep.equal([
      'start',
      'end:silence',
    ]);
    expect(run(concatAudio([quiet(500), tone(400, -20), quiet(700), tone(400, -20), quiet(800)])).kinds).to.deep.equal([
      'start',
      'end:silence',
      'start',
      'end:silence',
    ]);
  });

  it('takes a steady background as the floor: speech over it is found, the background alone is not', () => {
    expect(run(noise(3000, -45)).kinds).to.deep.equal([]);
    expect(run(concatAudio([noise(1000, -45), tone(800, -20), noise(1000, -45)])).kinds).to.deep.equal(['start', 'end:silence']);
  });

  it('cuts an utterance that goes on too long (and what follows is the next one)', () => {
    const e = new Endpointer({ sampleRate: RATE, endSilenceMs: 500, maxUtteranceMs: 2000 });
    const kinds = [...e.push(quiet(400)), ...e.push(tone(3000, -20))]
      .filter((x) => x.kind !== 'audio')
      .map((x) => (x.kind === 'end' ? `end:${x.reason}` : x.kind));
    expect(kinds).to.deep.equal(['start', 'end:max-length', 'start']);
  });
});

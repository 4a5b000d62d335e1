import alawmulaw from 'alawmulaw';
import { expect } from 'chai';
import { concatAudio } from '../../infrastructure/media/audio.js';
import { hasBinary, lineSpeech } from '../support/sip.js';
import { findSpeech } from '../support/speech-match.js';

/**
 * The judge of the SIP tests (test/support/speech-match.ts, docs/testing.md#sip-tests): it finds a sentence in what a
 * phone could have recorded (G.711, a gap, a lost frame, a cut end, line noise), and does not find it where it was
 * not said: another sentence in the same voice, silence, noise.
 */
describe('SIP tests: finding speech in a recording', function () {
  this.timeout(60_000);
  const SENTENCE = 'We open at nine in the morning and close at five in the afternoon.';
  let sentence: Int16Array;

  before(async function () {
    if (!hasBinary('espeak-ng')) this.skip();
    sentence = await lineSpeech(SENTENCE);
  });

  /** Through G.711 (µ-law), as a phone gets it. */
  const g711 = (s: Int16Array) => alawmulaw.mulaw.decode(alawmulaw.mulaw.encode(s));
  const quiet = (ms: number) => new Int16Array(ms * 8);
  /** uniform noise of peak `amplitude`, the same every run */
  const noise = (n: number, amplitude: number) => {
    let seed = 12345;
    return Float64Array.from({ length: n }, () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return (seed / 2 ** 30 - 1) * amplitude;
    });
  };
  /** with line noise added, about -60 dBFS */
  const noisy = (s: Int16Array) => {
    const n = noise(s.length, 30);
    return s.map((v, i) => Math.max(-32768, Math.min(32767, Math.round(v + n[i]!))));
  };
  /** what a phone on a loaded line may record: 1.3 s of silence, the sentence with a 40 ms gap, a lost 20 ms frame, the end cut */
  const recorded = (s: Int16Array) => {
    const speech = g711(s);
    return noisy(
      concatAudio([
        quiet(1300),
        speech.subarray(0, 8000),
        quiet(40),
        speech.subarray(8000, 16_000),
        speech.subarray(16_160, speech.length - 1200),
        quiet(3000),
      ]),
    );
  };

  it('finds the sentence through G.711 with a gap, a lost frame and a cut end, and says where', () => {
    const match = findSpeech(recorded(sentence), sentence);
    expect(match.found).to.be.at.least(0.9);
    expect(match.startMs).to.equal(1300);
    // the gap came in, the lost frame went out
    expect(match.shiftsMs).to.deep.equal([40, -20]);
  });

  it('does not find it in another sentence said by the same voice', async () => {
    for (const other of ['Your parcel will arrive on Tuesday between noon and four.', 'We close at nine in the evening on Sunday.']) {
      const match = findSpeech(recorded(await lineSpeech(other)), sentence);
      expect(match.found, other).to.be.below(0.2);
    }
  });

  it('does not find it in silence or in noise', () => {
    expect(findSpeech(quiet(6000), sentence).found).to.equal(0);
    expect(findSpeech(Int16Array.from(noise(6 * 8000, 3000), Math.round), sentence).found).to.be.below(0.2);
  });

  it('finds nothing of a reference that is silent', () => {
    expect(findSpeech(recorded(sentence), quiet(2000))).to.include({ found: 0, pieces: 0, startMs: null });
  });
});

import { expect } from 'chai';
import { BridgeRecorder } from '../../infrastructure/sip/bridge-recorder.js';
import { decodeWav } from '../../infrastructure/speech/wav.js';

/** A bridged call's recording (docs/sip.md#recording-bridged-calls): both sides mixed on the packet clock. */
describe('BridgeRecorder', () => {
  const frame = (value: number) => new Int16Array(160).fill(value);
  let now = 0;
  const recorder = () => {
    now = 1000;
    return new BridgeRecorder(() => now);
  };
  const samplesOf = (r: BridgeRecorder) => {
    const out = r.wav();
    expect(out).to.not.equal(null);
    const pcm = decodeWav(out!.wav);
    expect(pcm.sampleRate).to.equal(8000);
    return { samples: pcm.samples, durationMs: out!.durationMs };
  };

  it('mixes the two sides frame by frame: what both said at once is summed', () => {
    const r = recorder();
    for (let i = 0; i < 50; i++) {
      r.caller(frame(1000));
      r.far(frame(-300));
      now += 20;
    }
    const { samples, durationMs } = samplesOf(r);
    expect(durationMs).to.equal(1000);
    expect(samples.length).to.equal(8000);
    expect(new Set(samples)).to.deep.equal(new Set([700]));
  });

  it('keeps a side that came in a burst (the jitter buffer) in order, and places one after a silence where the clock says', () => {
    const r = recorder();
    // three frames at once, then nothing for a second, then one more
    r.caller(frame(1));
    r.caller(frame(2));
    r.caller(frame(3));
    now += 1000;
    r.caller(frame(4));
    const { samples } = samplesOf(r);
    expect([samples[0], samples[160], samples[320]]).to.deep.equal([1, 2, 3]);
    // the gap is silence; the last frame sits at 1 s
    expect(samples[480]).to.equal(0);
    expect(samples[8000]).to.equal(4);
    expect(samples.length).to.equal(8160);
  });

  it('clips a sum beyond 16 bits instead of wrapping it', () => {
    const r = recorder();
    r.caller(frame(30_000));
    r.far(frame(30_000));
    const { samples } = samplesOf(r);
    expect(samples[0]).to.equal(32767);
  });

  it('has nothing to give when no audio came', () => {
    expect(recorder().wav()).to.equal(null);
  });
});

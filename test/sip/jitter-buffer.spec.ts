import { expect } from 'chai';
import { JitterBuffer } from '../../infrastructure/sip/jitter-buffer.js';

/** The receiving side's jitter buffer (docs/sip.md#media): order, loss, late packets, statistics. */
describe('The RTP jitter buffer', () => {
  /** packet `seq` sent at seq × 20 ms, arriving `delay` ms later */
  const buffer = () => new JitterBuffer<number>({ depth: 3, unitsPerMs: 8 });
  const push = (b: JitterBuffer<number>, seq: number, delay = 0) => b.push(seq & 0xffff, (seq * 160) >>> 0, seq * 20 + delay, seq);

  it('passes packets in order straight through', () => {
    const b = buffer();
    expect([0, 1, 2].flatMap((s) => push(b, s))).to.deep.equal([0, 1, 2]);
    expect(b.stats).to.deep.equal({ packets: 3, lost: 0, late: 0, jitterMs: 0 });
  });

  it('puts a packet that comes late, within its depth, back in its place', () => {
    const b = buffer();
    const out = [0, 2, 3, 1, 4].flatMap((s) => push(b, s));
    expect(out).to.deep.equal([0, 1, 2, 3, 4]);
    expect(b.stats.lost).to.equal(0);
  });

  it('gives up on a missing packet once `depth` later ones wait, as silence (null)', () => {
    const b = buffer();
    expect([0, 2, 3].flatMap((s) => push(b, s))).to.deep.equal([0]);
    expect(push(b, 4)).to.deep.equal([null, 2, 3, 4]);
    expect(b.stats).to.include({ packets: 4, lost: 1, late: 0 });
  });

  it('drops a packet that comes after its place was played, and a duplicate', () => {
    const b = buffer();
    for (const s of [0, 2, 3, 4]) push(b, s);
    expect(push(b, 1)).to.deep.equal([]);
    expect(push(b, 4)).to.deep.equal([]);
    expect(b.stats).to.include({ packets: 6, lost: 1, late: 2 });
  });

  it('follows the sequence number across its wrap at 65536', () => {
    const b = buffer();
    const out = [65534, 65535, 65537, 65536, 65538].flatMap((s) => push(b, s));
    expect(out).to.deep.equal([65534, 65535, 65536, 65537, 65538]);
  });

  it('starts again at a packet far ahead instead of playing thousands of silent frames', () => {
    const b = buffer();
    for (const s of [0, 1, 3]) push(b, s);
    expect(push(b, 30_000)).to.deep.equal([null, 3, 30_000]);
    expect(push(b, 30_001)).to.deep.equal([30_001]);
    expect(b.stats).to.include({ packets: 5, lost: 1 });
  });

  it('hands over what it holds when the call ends, gaps counted as lost', () => {
    const b = buffer();
    for (const s of [0, 2, 4]) push(b, s);
    expect(b.flush()).to.deep.equal([null, 2, null, 4]);
    expect(b.stats.lost).to.equal(2);
    expect(buffer().flush()).to.deep.equal([]);
  });

  it("estimates the interarrival jitter as RFC 3550 does (A.8): 0 for steady arrivals, the spread's mean otherwise", () => {
    const steady = buffer();
    for (let s = 0; s < 50; s++) push(steady, s, 35);
    expect(steady.stats.jitterMs).to.equal(0);
    // arrivals alternately 0 and 10 ms late: every transit differs from the last by 10 ms
    const uneven = buffer();
    for (let s = 0; s < 500; s++) push(uneven, s, s % 2 === 0 ? 0 : 10);
    expect(uneven.stats.jitterMs).to.be.closeTo(10, 0.5);
  });
});

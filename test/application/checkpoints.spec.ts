import { expect } from 'chai';
import { compareCheckpoints, makeCheckpoint, parseCheckpoint, START } from '../../application/ports/event-store.port.js';
import { seededRandom } from '../support/fixtures.js';

/**
 * Checkpoints are compared digit by digit, without parsing them into numbers (application/ports/event-store.port.ts):
 * the order must be the numbers' order, part by part, which the parsed BigInts give.
 */
describe('checkpoints compared', () => {
  const byNumbers = (x: string, y: string): -1 | 0 | 1 => {
    const [xa, xb] = parseCheckpoint(x);
    const [ya, yb] = parseCheckpoint(y);
    if (xa !== ya) return xa < ya ? -1 : 1;
    if (xb !== yb) return xb < yb ? -1 : 1;
    return 0;
  };

  it('orders random checkpoints as their numbers do, part by part, leading zeros and numbers past 2^53 included', () => {
    const seed = 20261202;
    const random = seededRandom(seed);
    const digits = () => {
      const n = 1 + Math.floor(random() * 22);
      let s = '';
      for (let i = 0; i < n; i++) s += String(Math.floor(random() * (i === 0 && random() < 0.8 ? 3 : 10)));
      return s;
    };
    const part = () => (random() < 0.3 ? String(Math.floor(random() * 4)) : digits());
    const pool = Array.from({ length: 300 }, () => `${part()}/${part()}`);
    pool.push(START, '0/1', '1/0', makeCheckpoint(2n ** 64n, 1n), '00/000', '10/9', '9/10');
    for (const x of pool) {
      for (const y of pool) {
        expect(compareCheckpoints(x, y), `${x} vs ${y} (seed ${seed})`).to.equal(byNumbers(x, y));
      }
    }
  });

  it('refuses what is not two runs of digits, as parsing does', () => {
    for (const bad of ['', '/', '1/', '/1', '1', '1/2/3', 'a/1', '1/-2', ' 1/2', '1/2 ', '1.0/2']) {
      expect(() => compareCheckpoints(bad, START), bad).to.throw(/bad checkpoint/);
      expect(() => compareCheckpoints(START, bad), bad).to.throw(/bad checkpoint/);
      expect(() => parseCheckpoint(bad), bad).to.throw(/bad checkpoint/);
    }
  });
});

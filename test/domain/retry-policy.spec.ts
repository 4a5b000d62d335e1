import { expect } from 'chai';
import { MAX_ATTEMPTS, nextDelayS, RETRY_DELAYS_S } from '../../domain/webhook/retry-policy.js';

describe('webhook retry policy', () => {
  it('is the specification schedule: 6 attempts, +5 min, +30 min, +2 h, +6 h, +12 h', () => {
    expect(MAX_ATTEMPTS).to.equal(6);
    expect([...RETRY_DELAYS_S]).to.deep.equal([5 * 60, 30 * 60, 2 * 3600, 6 * 3600, 12 * 3600]);
    expect([1, 2, 3, 4, 5].map((n) => nextDelayS(n))).to.deep.equal([300, 1800, 7200, 21600, 43200]);
  });

  it('stops after the sixth failed attempt', () => {
    expect(nextDelayS(6)).to.equal(null);
    expect(nextDelayS(7)).to.equal(null);
  });

  it('stops earlier when the delivery allows fewer attempts', () => {
    expect(nextDelayS(1, { maxAttempts: 1 })).to.equal(null);
    expect(nextDelayS(1, { maxAttempts: 2 })).to.equal(300);
    expect(nextDelayS(2, { maxAttempts: 2 })).to.equal(null);
  });

  it('honours Retry-After within [scheduled, 2 x scheduled]', () => {
    expect(nextDelayS(1, { status: 429, retryAfterS: 10 })).to.equal(300);
    expect(nextDelayS(1, { status: 503, retryAfterS: 450 })).to.equal(450);
    expect(nextDelayS(1, { status: 503, retryAfterS: 100_000 })).to.equal(600);
  });

  it('refuses nonsense counts', () => {
    expect(nextDelayS(0)).to.equal(null);
    expect(nextDelayS(1.5)).to.equal(null);
  });
});

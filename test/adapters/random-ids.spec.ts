import { expect } from 'chai';
import { RandomIds } from '../../infrastructure/adapters/random-ids.js';
import { TestClock } from '../support/fixtures.js';

// Ids (`<prefix>_<10 chars of time><16 chars of randomness>`) take their randomness from a pool of the operating
// system's random bytes, refilled every 256 ids: no two ids of the same millisecond may share it.

describe('RandomIds', () => {
  it('gives ids of one millisecond, across several refills of the pool, randomness of their own', () => {
    const ids = new RandomIds(new TestClock(new Date('2026-11-28T10:00:00.000Z')));
    const made = Array.from({ length: 3000 }, () => ids.id('msg'));
    for (const id of made) expect(id).to.match(/^msg_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(new Set(made.map((id) => id.slice(0, 14))).size).to.equal(1);
    expect(new Set(made.map((id) => id.slice(14))).size).to.equal(made.length);
  });

  it('orders ids by the time they were made', () => {
    const clock = new TestClock(new Date('2026-11-28T10:00:00.000Z'));
    const ids = new RandomIds(clock);
    const first = ids.id('msg');
    clock.advance(1);
    const second = ids.id('msg');
    expect(first < second).to.equal(true);
  });
});

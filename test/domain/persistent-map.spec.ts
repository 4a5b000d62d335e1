import { expect } from 'chai';
import { fnv30, PersistentMap } from '../../domain/shared/persistent-map.js';

/** a small seeded generator (mulberry32), so a failure can be run again */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const sorted = <V>(entries: Iterable<[string, V]>) => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * Random sets and deletes on the persistent map and on a `Map` side by side: every answer the same after each change,
 * and every version kept along the way still what it was when made.
 */
function against(hash: (key: string) => number, seed: number, o: { keys: number; changes: number }) {
  const next = random(seed);
  const key = () => `+1312555${String(Math.floor(next() * o.keys)).padStart(4, '0')}`;
  let map = PersistentMap.empty<number>(hash);
  const model = new Map<string, number>();
  const kept: { map: PersistentMap<number>; model: [string, number][] }[] = [];
  for (let i = 0; i < o.changes; i++) {
    const k = key();
    if (next() < 0.3) {
      map = map.delete(k);
      model.delete(k);
    } else {
      map = map.set(k, i);
      model.set(k, i);
    }
    const probe = key();
    expect(map.get(k), `after change ${i}`).to.equal(model.get(k));
    expect(map.get(probe), `a probe after change ${i}`).to.equal(model.get(probe));
    expect(map.has(probe)).to.equal(model.has(probe));
    expect(map.size).to.equal(model.size);
    if (i % Math.ceil(o.changes / 20) === 0) kept.push({ map, model: sorted(model) });
  }
  expect(sorted(map.entries())).to.deep.equal(sorted(model));
  for (const v of kept) {
    expect(sorted(v.map.entries())).to.deep.equal(v.model);
    expect(v.map.size).to.equal(v.model.length);
    for (const [k, value] of v.model) expect(v.map.get(k)).to.equal(value);
  }
}

describe('PersistentMap (domain/shared/persistent-map.ts)', () => {
  it('answers as a Map does, over random changes, with its own hash', () => {
    against(fnv30, 1, { keys: 3_000, changes: 20_000 });
  });

  it('keys whose hashes are equal share a bucket, and still come apart', () => {
    // three hashes for every key: buckets everywhere, and buckets that split into branches
    against((k) => k.charCodeAt(k.length - 1) % 3, 2, { keys: 200, changes: 4_000 });
  });

  it('keys whose hashes differ only in their last level go down every level', () => {
    // the hash's top 5 bits only: every pair of keys shares the first five levels' slots
    against((k) => (k.charCodeAt(k.length - 1) % 32) << 25, 3, { keys: 100, changes: 3_000 });
  });

  it('leaves the map it was asked of as it was', () => {
    const a = PersistentMap.empty<boolean>().set('+1', true).set('+2', false);
    const b = a.set('+3', true).delete('+1');
    expect([a.size, a.get('+1'), a.has('+3')]).to.deep.equal([2, true, false]);
    expect([b.size, b.get('+1'), b.get('+3'), b.get('+2')]).to.deep.equal([2, undefined, true, false]);
    expect(b.delete('+404')).to.equal(b);
  });
});

import { expect } from 'chai';
import { KeptRows } from '../../projections/shared/kept-rows.js';

/** The rows a projector's batches wrote, kept for its next batches while it holds its lease (docs/event-store.md#kept-rows). */
describe('kept rows of a projector', () => {
  let clock = 0;
  const kept = (maxEntries = 10) => {
    const k = new KeptRows<{ v: number }>({ maxEntries, now: () => clock });
    k.held(clock + 1_000);
    return k;
  };
  const batch = (k: KeptRows<{ v: number }>, rows: Record<string, number | null>, outcome: 'commits' | 'fails' = 'commits') => {
    k.begin();
    for (const [key, v] of Object.entries(rows)) k.stage(key, v === null ? null : { v });
    if (outcome === 'commits') k.committed();
    else k.failed();
  };
  beforeEach(() => {
    clock = 0;
  });

  it('keeps what a batch staged only once it commits, and forgets a row staged as null', () => {
    const k = kept();
    k.begin();
    k.stage('a', { v: 1 });
    expect(k.get('a')).to.equal(undefined);
    k.committed();
    expect(k.get('a')).to.deep.equal({ v: 1 });
    batch(k, { a: 2, b: 3 });
    batch(k, { a: null });
    expect([k.get('a'), k.get('b')]).to.deep.equal([undefined, { v: 3 }]);
  });

  it('forgets everything when a batch fails, and what a failed batch staged is never kept', () => {
    const k = kept();
    batch(k, { a: 1 });
    batch(k, { b: 2 }, 'fails');
    batch(k, { c: 3 });
    expect([k.get('a'), k.get('b'), k.get('c')]).to.deep.equal([undefined, undefined, { v: 3 }]);
  });

  it('keeps nothing without the lease, forgets at its taking and its loss, and once its time ran out without a renewal', () => {
    const k = new KeptRows<{ v: number }>({ maxEntries: 10, now: () => clock });
    batch(k, { a: 1 });
    expect(k.get('a')).to.equal(undefined); // never held
    k.held(1_000);
    batch(k, { a: 1 });
    k.held(2_000); // renewed: still kept
    expect(k.get('a')).to.deep.equal({ v: 1 });
    clock = 2_000; // no renewal in time: another process may hold it now
    expect(k.get('a')).to.equal(undefined);
    k.held(3_000); // taken again: nothing from before
    expect(k.get('a')).to.equal(undefined);
    batch(k, { b: 2 });
    k.held(null);
    k.held(4_000);
    expect(k.get('b')).to.equal(undefined);
  });

  it('keeps at most maxEntries, the oldest written going first', () => {
    const k = kept(2);
    batch(k, { a: 1, b: 2 });
    batch(k, { c: 3 });
    expect([k.get('a'), k.get('b'), k.get('c')]).to.deep.equal([undefined, { v: 2 }, { v: 3 }]);
    batch(k, { b: 4 }); // written again: now the newest
    batch(k, { d: 5 });
    expect([k.get('b'), k.get('c'), k.get('d')]).to.deep.equal([{ v: 4 }, undefined, { v: 5 }]);
  });
});

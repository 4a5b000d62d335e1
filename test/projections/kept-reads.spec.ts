import { expect } from 'chai';
import type { LeaseListener } from '../../projections/shared/checkpoint-runner.js';
import { KeptReads, keptReadsOf } from '../../projections/shared/kept-reads.js';

/** A read model whose rows the test moves, counting its reads; a read can be held (its rows read, its answer late). */
function readModel() {
  const rows = new Map<string, { id: string; revoked: boolean }>();
  let held: Promise<void> | null = null;
  const model = {
    rows,
    reads: 0,
    hold() {
      let release = (): void => undefined;
      held = new Promise<void>((r) => {
        release = r;
      });
      return () => release();
    },
    look: (key: string) => async () => {
      model.reads++;
      const answer = rows.get(key) ?? null; // the rows as they were when the read ran
      if (held) await held;
      return answer;
    },
  };
  return model;
}

describe("KeptReads: a read model's answers kept until its projector's next batch", () => {
  let now = 0;
  const kept = (o: Partial<{ maxEntries: number; maxAgeMs: number }> = {}) =>
    new KeptReads({ maxEntries: 100, maxAgeMs: 60_000, now: () => now, ...o });
  const found = { keepMissing: false };

  beforeEach(() => {
    now = 1_000_000;
  });

  it('answers a key again without reading the read model', async () => {
    const m = readModel();
    m.rows.set('k1', { id: 'key_1', revoked: false });
    const k = kept();
    expect((await k.read('k1', m.look('k1'), found))?.id).to.equal('key_1');
    expect((await k.read('k1', m.look('k1'), found))?.id).to.equal('key_1');
    expect(m.reads).to.equal(1);
  });

  it('reads again once the projector has committed a batch, so a revoked key is refused as soon as the read model says so', async () => {
    const m = readModel();
    m.rows.set('k1', { id: 'key_1', revoked: false });
    const k = kept();
    await k.read('k1', m.look('k1'), found);
    m.rows.set('k1', { id: 'key_1', revoked: true });
    k.moved();
    expect((await k.read('k1', m.look('k1'), found))?.revoked).to.equal(true);
    expect(m.reads).to.equal(2);
  });

  it('does not keep an answer read before a batch that came while it was read', async () => {
    const m = readModel();
    m.rows.set('k1', { id: 'key_1', revoked: false });
    const k = kept();
    const release = m.hold();
    const pending = k.read('k1', m.look('k1'), found); // reads the rows now, answers later
    m.rows.set('k1', { id: 'key_1', revoked: true });
    k.moved();
    release();
    expect((await pending)?.revoked).to.equal(false);
    expect((await k.read('k1', m.look('k1'), found))?.revoked).to.equal(true);
  });

  it('keeps "not found" only when asked to', async () => {
    const m = readModel();
    const k = kept();
    expect(await k.read('k1', m.look('k1'), found)).to.equal(null);
    m.rows.set('k1', { id: 'key_1', revoked: false });
    expect((await k.read('k1', m.look('k1'), found))?.id).to.equal('key_1');
    expect(await k.read('k2', m.look('k2'), { keepMissing: true })).to.equal(null);
    m.rows.set('k2', { id: 'key_2', revoked: false });
    expect(await k.read('k2', m.look('k2'), { keepMissing: true })).to.equal(null);
    k.moved();
    expect((await k.read('k2', m.look('k2'), { keepMissing: true }))?.id).to.equal('key_2');
  });

  it('reads again after maxAgeMs, and keeps at most maxEntries, the oldest going first', async () => {
    const m = readModel();
    for (const key of ['k1', 'k2', 'k3']) m.rows.set(key, { id: key, revoked: false });
    const k = kept({ maxEntries: 2, maxAgeMs: 1_000 });
    await k.read('k1', m.look('k1'), found);
    now += 1_000;
    await k.read('k1', m.look('k1'), found);
    expect(m.reads).to.equal(2);
    await k.read('k2', m.look('k2'), found);
    await k.read('k3', m.look('k3'), found); // k1 goes
    const before = m.reads;
    await k.read('k3', m.look('k3'), found);
    await k.read('k2', m.look('k2'), found);
    expect(m.reads).to.equal(before);
    await k.read('k1', m.look('k1'), found);
    expect(m.reads).to.equal(before + 1);
  });

  it("keptReadsOf: each projector's batches forget that projector's answers only", async () => {
    let tell: (projector: string) => void = () => undefined;
    const of = keptReadsOf((fn) => (tell = fn), { maxEntries: 10, maxAgeMs: 60_000, now: () => now });
    expect(of('rich_v1')).to.equal(of('rich_v1'));
    const m = readModel();
    m.rows.set('k1', { id: 'key_1', revoked: false });
    await of('rich_v1')!.read('k1', m.look('k1'), found);
    await of('chatapp_v1')!.read('k1', m.look('k1'), found);
    tell('chatapp_v1');
    await of('rich_v1')!.read('k1', m.look('k1'), found);
    expect(m.reads).to.equal(2);
    await of('chatapp_v1')!.read('k1', m.look('k1'), found);
    expect(m.reads).to.equal(3);
  });
  describe("on a server: only while this process holds the projector's lease", () => {
    let leaseNow = 0;
    const leased = () => new KeptReads({ maxEntries: 100, maxAgeMs: 60_000, now: () => now, lease: { now: () => leaseNow } });
    beforeEach(() => {
      leaseNow = 5_000;
    });

    it('keeps nothing before the lease is taken, keeps while it is held, and stops at its end', async () => {
      const m = readModel();
      m.rows.set('k1', { id: 'key_1', revoked: false });
      const k = leased();
      await k.read('k1', m.look('k1'), found);
      await k.read('k1', m.look('k1'), found);
      expect(m.reads).to.equal(2);
      k.held(leaseNow + 1_000);
      await k.read('k1', m.look('k1'), found);
      await k.read('k1', m.look('k1'), found);
      expect(m.reads).to.equal(3);
      // no renewal came in time: another process may have taken the lease, so every look-up reads
      leaseNow += 1_000;
      m.rows.set('k1', { id: 'key_1', revoked: true });
      expect((await k.read('k1', m.look('k1'), found))?.revoked).to.equal(true);
      expect(m.reads).to.equal(4);
      // a renewal that came late: kept again, from a fresh read
      k.held(leaseNow + 1_000);
      await k.read('k1', m.look('k1'), found);
      await k.read('k1', m.look('k1'), found);
      expect(m.reads).to.equal(5);
      k.held(null);
      await k.read('k1', m.look('k1'), found);
      expect(m.reads).to.equal(6);
    });

    it('forgets what it kept when the lease is taken again: another process may have moved the read model meanwhile', async () => {
      const m = readModel();
      m.rows.set('k1', { id: 'key_1', revoked: false });
      const k = leased();
      k.held(leaseNow + 1_000);
      await k.read('k1', m.look('k1'), found);
      k.held(null);
      m.rows.set('k1', { id: 'key_1', revoked: true });
      k.held(leaseNow + 1_000);
      expect((await k.read('k1', m.look('k1'), found))?.revoked).to.equal(true);
    });

    it("gives nothing kept and keeps nothing while a batch commits, since a request may see the batch's checkpoint first", async () => {
      const m = readModel();
      m.rows.set('k1', { id: 'key_1', revoked: false });
      const k = leased();
      k.held(leaseNow + 1_000);
      await k.read('k1', m.look('k1'), found);
      k.commit('start');
      m.rows.set('k1', { id: 'key_1', revoked: true });
      expect((await k.read('k1', m.look('k1'), found))?.revoked).to.equal(true);
      await k.read('k1', m.look('k1'), found);
      expect(m.reads).to.equal(3);
      k.commit('end');
      await k.read('k1', m.look('k1'), found);
      await k.read('k1', m.look('k1'), found);
      expect(m.reads).to.equal(4);
    });

    it('keptReadsOf: told which leases are held and which batches commit, per projector', async () => {
      let word: LeaseListener | null = null;
      const of = keptReadsOf(
        () => undefined,
        { maxEntries: 10, maxAgeMs: 60_000, now: () => now },
        {
          now: () => leaseNow,
          listen: (fn) => {
            word = fn;
          },
        },
      );
      const m = readModel();
      m.rows.set('k1', { id: 'key_1', revoked: false });
      word!.held('rich_v1', leaseNow + 1_000);
      await of('rich_v1').read('k1', m.look('k1'), found);
      await of('rich_v1').read('k1', m.look('k1'), found);
      await of('chatapp_v1').read('k1', m.look('k1'), found);
      await of('chatapp_v1').read('k1', m.look('k1'), found);
      expect(m.reads).to.equal(3);
      word!.committing('rich_v1', 'start');
      await of('rich_v1').read('k1', m.look('k1'), found);
      expect(m.reads).to.equal(4);
    });
  });
});

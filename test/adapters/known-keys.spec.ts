import { expect } from 'chai';
import type { AccountQueries } from '../../application/accounts/account-queries.port.js';
import { KnownKeys } from '../../infrastructure/http/known-keys.js';

type Found = Awaited<ReturnType<AccountQueries['keyWithAccount']>>;

const found = (keyId: string, revoked = false): NonNullable<Found> => ({
  key: { keyId, accountId: 'acc_1', name: 'k', prefix: 'p', createdAt: '', revoked, revokedAt: null, lastUsedAt: null },
  account: {
    accountId: 'acc_1',
    parentAccountId: null,
    name: 'A',
    status: 'active',
    balanceMicros: 0,
    numberLimit: 10,
    numbersUsed: 0,
    createdAt: '',
  },
});

/** A read model of keys whose rows the test moves, counting its look-ups; a look-up can be held until released. */
function readModel() {
  const rows = new Map<string, NonNullable<Found>>();
  let held: { release: () => void; ready: Promise<void> } | null = null;
  const model = {
    rows,
    lookups: 0,
    hold() {
      let release = () => undefined as void;
      const ready = new Promise<void>((r) => {
        release = r;
      });
      held = { release, ready };
      return () => release();
    },
    async keyWithAccount(hash: string): Promise<Found> {
      model.lookups++;
      const answer = rows.get(hash) ?? null; // the rows as they were when the look-up ran
      if (held) await held.ready;
      return answer;
    },
  };
  return model;
}

describe('KnownKeys: the API keys authentication found, kept while the accounts read model stands still', () => {
  let now = 0;
  const options = (o: Partial<{ maxKeys: number; maxAgeMs: number }> = {}) => ({ maxKeys: 100, maxAgeMs: 60_000, now: () => now, ...o });

  beforeEach(() => {
    now = 1_000_000;
  });

  it('answers a key it found again without asking the read model', async () => {
    const m = readModel();
    m.rows.set('h1', found('key_1'));
    const keys = new KnownKeys(m, options());
    expect((await keys.keyWithAccount('h1'))?.key.keyId).to.equal('key_1');
    expect((await keys.keyWithAccount('h1'))?.key.keyId).to.equal('key_1');
    expect(m.lookups).to.equal(1);
  });

  it('asks again once the read model has moved, so a revoked key is refused as soon as the read model says so', async () => {
    const m = readModel();
    m.rows.set('h1', found('key_1'));
    const keys = new KnownKeys(m, options());
    await keys.keyWithAccount('h1');
    m.rows.set('h1', found('key_1', true));
    keys.moved();
    expect((await keys.keyWithAccount('h1'))?.key.revoked).to.equal(true);
    expect(m.lookups).to.equal(2);
  });

  it('does not keep what a look-up read before a batch that came while it ran', async () => {
    const m = readModel();
    m.rows.set('h1', found('key_1'));
    const keys = new KnownKeys(m, options());
    const release = m.hold();
    const pending = keys.keyWithAccount('h1'); // reads the rows now, answers later
    m.rows.set('h1', found('key_1', true));
    keys.moved();
    release();
    expect((await pending)?.key.revoked).to.equal(false);
    expect((await keys.keyWithAccount('h1'))?.key.revoked).to.equal(true);
  });

  it('keeps no key that was not found, so a key issued later is found', async () => {
    const m = readModel();
    const keys = new KnownKeys(m, options());
    expect(await keys.keyWithAccount('h1')).to.equal(null);
    m.rows.set('h1', found('key_1'));
    expect((await keys.keyWithAccount('h1'))?.key.keyId).to.equal('key_1');
  });

  it('asks again after maxAgeMs, and keeps at most maxKeys, the oldest going first', async () => {
    const m = readModel();
    for (const h of ['h1', 'h2', 'h3']) m.rows.set(h, found(h));
    const keys = new KnownKeys(m, options({ maxKeys: 2, maxAgeMs: 1_000 }));
    await keys.keyWithAccount('h1');
    now += 1_000;
    await keys.keyWithAccount('h1');
    expect(m.lookups).to.equal(2);
    await keys.keyWithAccount('h2');
    await keys.keyWithAccount('h3'); // h1 goes
    const before = m.lookups;
    await keys.keyWithAccount('h3');
    await keys.keyWithAccount('h2');
    expect(m.lookups).to.equal(before);
    await keys.keyWithAccount('h1');
    expect(m.lookups).to.equal(before + 1);
  });
});

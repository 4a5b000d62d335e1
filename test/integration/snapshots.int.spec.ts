import { expect } from 'chai';
import { sql } from 'kysely';
import { CommandExecutor, SNAPSHOT_EVERY } from '../../application/shared/execute.js';
import { accountDecider, accountStream } from '../../domain/account/account.decider.js';
import { KyselySnapshotStore } from '../../infrastructure/event-store/kysely-snapshot-store.js';
import { noReadModels, TestClock } from '../support/fixtures.js';
import { type StoreUnderTest, storeUnderTest } from '../support/stores.js';

/** Aggregates with long streams load from a snapshot and fold only what follows it (docs/event-store.md#snapshots). */
describe('snapshots of long streams', function () {
  this.timeout(120_000);
  let sut: StoreUnderTest;
  let withSnapshots: CommandExecutor;
  let without: CommandExecutor;
  const ids = {
    id: (p: string) => `${p}_x`,
    uuid: () => crypto.randomUUID(),
    derived: (p: string, ...parts: string[]) => `${p}_${parts.join(':')}`,
  };
  before(async () => {
    sut = await storeUnderTest();
    const clock = new TestClock();
    withSnapshots = new CommandExecutor(sut.store, ids, clock, noReadModels, new KyselySnapshotStore(sut.handle.db));
    without = new CommandExecutor(sut.store, ids, clock, noReadModels);
  });
  after(() => sut.close());

  const ctx = (accountId: string) => ({ accountId, requestId: null, correlationId: 'c', actor: 'test' });
  async function accountWithCharges(n: number): Promise<string> {
    const accountId = `acc_${crypto.randomUUID().slice(0, 8)}`;
    await withSnapshots.execute(
      accountDecider,
      accountStream(accountId),
      {
        type: 'OpenAccount',
        data: { accountId, name: 'A', parentAccountId: null, startingCreditMicros: 10_000_000, numberLimit: 10, initialKey: null },
      },
      ctx(accountId),
    );
    // the charges appended directly, in a few large appends, as a long history would be
    const { revision } = await without.load(accountDecider, accountStream(accountId));
    let next = (revision as bigint) + 1n;
    for (let i = 0; i < n; i += 100) {
      const batch = Array.from({ length: Math.min(100, n - i) }, (_, k) => ({
        id: crypto.randomUUID(),
        type: 'AccountCharged',
        data: {
          accountId,
          chargeId: k % 10 === 0 ? `number_monthly:pn_${i + k}:0` : `number_lookup:${crypto.randomUUID()}`,
          amountMicros: 10,
          balanceMicros: 10_000_000 - 10 * (i + k + 1),
          kind: k % 10 === 0 ? 'number_monthly' : 'number_lookup',
          description: 'charge',
          reference: null,
          chargedAt: '2026-01-01T00:00:00.000Z',
        },
        metadata: { accountId, correlationId: 'c', causationId: null, requestId: null, actor: 'test' },
      }));
      await sut.store.appendToStream(accountStream(accountId), batch, { expectedRevision: next - 1n });
      next += BigInt(batch.length);
    }
    return accountId;
  }
  const snapshotOf = async (stream: string) =>
    (await sql<{ revision: string }>`select revision from aggregate_snapshots where stream_name = ${stream}`.execute(sut.handle.db))
      .rows[0];

  it('a load that folded many events leaves a snapshot; the next folds only what follows it, to the same state', async () => {
    const accountId = await accountWithCharges(3 * SNAPSHOT_EVERY);
    const stream = accountStream(accountId);
    const full = await without.load(accountDecider, stream);
    expect(await snapshotOf(stream)).to.equal(undefined);

    const first = await withSnapshots.load(accountDecider, stream);
    expect(first.events).to.have.length(full.events.length);
    const deadline = Date.now() + 10_000;
    while (!(await snapshotOf(stream)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(String((await snapshotOf(stream))?.revision)).to.equal(String(full.revision));

    // two more charges after the snapshot
    for (const chargeId of ['number_monthly:pn_x:1', 'number_lookup:y'])
      await withSnapshots.execute(
        accountDecider,
        stream,
        {
          type: 'ChargeAccount',
          data: { accountId, chargeId, amountMicros: 5, kind: 'number_monthly', description: 'd', reference: null },
        },
        ctx(accountId),
      );
    const fromSnapshot = await withSnapshots.load(accountDecider, stream);
    const fromStart = await without.load(accountDecider, stream);
    expect(fromSnapshot.events.map((e) => e.type)).to.deep.equal(['AccountCharged', 'AccountCharged']);
    expect(fromSnapshot.revision).to.equal(fromStart.revision);
    expect(fromSnapshot.state).to.deep.equal(fromStart.state);
  });

  it('ignores a snapshot of another state version and folds from the start', async () => {
    const accountId = await accountWithCharges(SNAPSHOT_EVERY);
    const stream = accountStream(accountId);
    await new KyselySnapshotStore(sut.handle.db).save(stream, { revision: 5n, version: 999, state: { status: 'none' } });
    const r = await withSnapshots.load(accountDecider, stream);
    expect(r.state).to.deep.equal((await without.load(accountDecider, stream)).state);
    expect(r.events.length).to.be.greaterThan(SNAPSHOT_EVERY);
  });
});

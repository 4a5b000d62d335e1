import { expect } from 'chai';
import type { Kysely } from 'kysely';
import { KyselyDueAttempts } from '../../infrastructure/webhooks/due-attempts.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { startTestApp, type TestApp } from '../support/http.js';

/** The webhook retry timeline's claim: at most `limit` attempts at a time, the earliest due first. */
describe('webhook timeline claims', function () {
  this.timeout(30_000);
  let app: TestApp;
  before(async () => {
    // no delivery worker of its own: it would claim the rows this test claims (docs/configuration.md)
    app = await startTestApp({ WEBHOOK_CONCURRENCY: '0' });
  });
  after(() => app.close());

  it('claims at most its limit, the earliest due first, and never the same attempt twice', async () => {
    const db = app.rt.database.db as unknown as Kysely<ReadDb>;
    const base = Date.parse('2026-03-01T00:00:00.000Z');
    const rows = Array.from({ length: 12 }, (_, i) => ({
      delivery_id: `dlv_claim_${String(i).padStart(2, '0')}`,
      account_id: 'acc_claims',
      attempt: 1,
      // due one second apart, inserted newest first
      due_at: new Date(base + (11 - i) * 1000).toISOString(),
      claimed_by: null,
      claimed_until: null,
      revision: '0',
    }));
    await db.insertInto('webhook_due_attempts').values(rows).execute();
    const timeline = new KyselyDueAttempts(db);
    const now = new Date(base + 60_000);
    const claimed: string[] = [];
    for (;;) {
      const batch = await timeline.claim({ now, limit: 5, workerId: 'w1', leaseMs: 60_000 });
      if (batch.length === 0) break;
      expect(batch.length).to.be.at.most(5);
      claimed.push(...batch.map((b) => b.deliveryId));
    }
    const mine = claimed.filter((id) => id.startsWith('dlv_claim_'));
    expect(new Set(mine).size).to.equal(12);
    expect(mine.slice(0, 5).sort()).to.deep.equal(['dlv_claim_07', 'dlv_claim_08', 'dlv_claim_09', 'dlv_claim_10', 'dlv_claim_11']);
  });
});

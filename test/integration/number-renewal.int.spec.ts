import { expect } from 'chai';
import type { RenewalPass } from '../../application/numbers/number-renewals.js';
import { monthlyChargeId } from '../../domain/phone-number/pricing.js';
import { ACCOUNTS } from '../../infrastructure/accounts/tokens.js';
import type { PassWorker } from '../../infrastructure/workers.js';
import { TestClock } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { account, credit, eventually, usage } from '../support/numbers.js';

/**
 * Issue 3's monthly renewal: $3.00 per active number per month from its provisioning date, idempotent per
 * number and period, flagged (not released) when it cannot be paid. Time is a TestClock moved by the test.
 * The job's own timer is stopped while the tests run passes with `runOnce` (so they know when a pass is over),
 * and started again for the last test, which only moves the clock.
 */
describe('monthly number renewal', function () {
  this.timeout(30_000);
  let app: TestApp;
  let worker: PassWorker<RenewalPass>;
  const clock = new TestClock(new Date('2026-01-31T10:00:00.000Z'));
  before(async () => {
    app = await startTestApp({ NUMBER_RENEWAL_INTERVAL_MS: '100' }, { clock });
    worker = app.rt.workers.get('number-renewal') as PassWorker<RenewalPass>;
    await worker.stop();
  });
  after(() => app.close());

  const get = async (key: string, id: string) => (await app.call('GET', `/v1/numbers/${id}`, { key })).body;
  const charges = async (id: string) =>
    (
      await app.rt.database.db
        .selectFrom('account_ledger')
        .select(['amount_micros', 'description'])
        .where('reference', '=', id)
        .orderBy('at')
        .execute()
    ).map((r) => Number(r.amount_micros));

  it('flags a renewal the balance cannot cover, keeps the number active, and charges it once the account is topped up', async () => {
    const acc = await account(app);
    const n = (await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '415' } })).body;
    expect(n.paidThrough).to.equal('2026-02-28T10:00:00.000Z'); // Jan 31 + 1 month, clamped

    clock.set('2026-02-28T09:59:59.000Z');
    await worker.runOnce();
    expect(await charges(n.id)).to.deep.equal([-3_000_000]); // not due yet

    clock.set('2026-02-28T10:00:00.000Z');
    await worker.runOnce();
    let v = await get(acc.apiKey, n.id);
    expect(v).to.include({ status: 'active', renewalStatus: 'payment_failed', paidThrough: '2026-02-28T10:00:00.000Z' });
    const flagged = (await app.rt.store.readStream(`phone_number-${n.id}`)).at(-1)!;
    expect(flagged.type).to.equal('NumberRenewalPaymentFailed');
    expect(flagged.data).to.include({ period: 1, neededMicros: 3_000_000, balanceMicros: 2_000_000 });
    await worker.runOnce();
    expect((await app.rt.store.readStream(`phone_number-${n.id}`)).filter((e) => e.type === 'NumberRenewalPaymentFailed')).to.have.length(
      1,
    );

    await credit(app, acc.accountId, 10_000_000);
    clock.advance(60_000);
    await worker.runOnce();
    v = await get(acc.apiKey, n.id);
    // the next month runs from the provisioning date (Mar 31), not from the day it was finally paid
    expect(v).to.include({ renewalStatus: 'ok', paidThrough: '2026-03-31T10:00:00.000Z' });
    expect(await charges(n.id)).to.deep.equal([-3_000_000, -3_000_000]);
    expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(9_000_000);
    await worker.runOnce();
    expect(await charges(n.id)).to.have.length(2);
  });

  it('catches up every month that has passed, one charge per month', async () => {
    const acc = await account(app, { creditMicros: 20_000_000 });
    clock.set('2026-04-15T00:00:00.000Z');
    const n = (await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '212' } })).body;
    clock.set('2026-07-15T00:00:00.000Z');
    await worker.runOnce();
    expect(await charges(n.id)).to.deep.equal([-3_000_000, -3_000_000, -3_000_000, -3_000_000]);
    expect((await get(acc.apiKey, n.id)).paidThrough).to.equal('2026-08-15T00:00:00.000Z');
    const ids = (await app.rt.store.readStream(`phone_number-${n.id}`))
      .filter((e) => e.type === 'NumberRenewed')
      .map((e) => (e.data as { chargeId: string }).chargeId);
    expect(ids).to.deep.equal([1, 2, 3].map((p) => monthlyChargeId(n.id, p)));
  });

  it('records a renewal whose charge went through before a crash, without charging it again', async () => {
    const acc = await account(app, { creditMicros: 20_000_000 });
    clock.set('2026-08-01T00:00:00.000Z');
    const n = (await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '305' } })).body;
    // a pass charged period 1 and died before recording NumberRenewed
    const ctx = { accountId: acc.accountId, requestId: null, correlationId: 'crashed-renewal', actor: 'system:number-renewal' };
    await app.rt.get(ACCOUNTS.Billing).charge(ctx, acc.accountId, {
      chargeId: monthlyChargeId(n.id, 1),
      amountMicros: 3_000_000,
      kind: 'number_monthly',
      description: 'renewal',
      reference: n.id,
    });
    clock.set('2026-09-01T00:00:00.000Z');
    await worker.runOnce();
    expect(await charges(n.id)).to.deep.equal([-3_000_000, -3_000_000]);
    expect((await get(acc.apiKey, n.id)).paidThrough).to.equal('2026-10-01T00:00:00.000Z');
  });

  it('does not renew released numbers', async () => {
    const acc = await account(app, { creditMicros: 20_000_000 });
    clock.set('2026-10-05T00:00:00.000Z');
    const n = (await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '312' } })).body;
    await app.call('DELETE', `/v1/numbers/${n.id}`, { key: acc.apiKey });
    clock.set('2027-01-05T00:00:00.000Z');
    await worker.runOnce();
    expect(await charges(n.id)).to.deep.equal([-3_000_000]);
  });

  it('runs by itself on its interval', async () => {
    await worker.start();
    const acc = await account(app, { creditMicros: 5_000_000 });
    clock.set('2027-02-01T00:00:00.000Z');
    const n = (await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '415' } })).body;
    clock.set('2027-03-02T00:00:00.000Z');
    await eventually(async () => (await get(acc.apiKey, n.id)).paidThrough === '2027-04-01T00:00:00.000Z', 'renewed by the job');
    expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(4_000_000);
  });
});

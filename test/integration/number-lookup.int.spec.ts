import { expect } from 'chai';
import { ACCOUNTS } from '../../infrastructure/accounts/tokens.js';
import { accountsProjector } from '../../projections/accounts/accounts.projector.js';
import { TestClock } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { account, credit, sandbox, usage } from '../support/numbers.js';
import { projectorsCaughtUp } from '../support/projections.js';

/** GET /v1/numbers/lookup: validation, sandbox answers, $0.009 per number looked up, the per-account cache. */
describe('number lookup over HTTP', function () {
  this.timeout(30_000);
  let app: TestApp;
  const clock = new TestClock(new Date('2026-05-01T00:00:00.000Z'));
  before(async () => {
    app = await startTestApp({ NUMBER_LOOKUP_CACHE_TTL_SECONDS: '3600' }, { clock });
  });
  after(() => app.close());

  const lookup = (key: string, numbers: string) =>
    app.call('GET', `/v1/numbers/lookup?phoneNumbers=${encodeURIComponent(numbers)}`, { key });

  it('answers line type, country, carrier and RCS support per number, deterministically, and charges $0.009 each', async () => {
    const acc = await account(app);
    const r = await lookup(
      acc.apiKey,
      '+14155550100,+14165550125,+12125550186,+18005550199,+19005550100,+14155550139,+447700900123,+19995550100',
    );
    expect(r.status).to.equal(200);
    const by = Object.fromEntries(r.body.data.map((d: { phoneNumber: string }) => [d.phoneNumber, d]));
    expect(by['+14155550100']).to.include({
      valid: true,
      lineType: 'mobile',
      country: 'US',
      carrierName: 'Sandbox Wireless',
      rcsSupported: true,
      cached: false,
    });
    expect(by['+14165550125']).to.include({ lineType: 'landline', country: 'CA', rcsSupported: false });
    expect(by['+12125550186']).to.include({ lineType: 'landline', country: 'US' });
    expect(by['+18005550199']).to.include({ lineType: 'toll-free', country: 'US' });
    expect(by['+19005550100']).to.include({ lineType: 'premium' });
    expect(by['+14155550139']).to.include({ lineType: 'unknown', carrierName: null });
    expect(by['+447700900123']).to.include({ lineType: 'mobile', country: 'GB' });
    expect(by['+19995550100']).to.include({ valid: false, lineType: 'unknown', country: null });
    expect(r.body).to.include({ chargedNumbers: 8, chargedMicros: 72_000 });
    expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(5_000_000 - 72_000);
    const ledger = await app.rt.database.db
      .selectFrom('account_ledger')
      .selectAll()
      .where('account_id', '=', acc.accountId)
      .where('kind', '=', 'number_lookup')
      .execute();
    expect(ledger.map((l) => Number(l.amount_micros))).to.deep.equal([-72_000]);
  });

  it("answers from the account's cache without charging again, within the TTL; a repeated number counts once", async () => {
    const acc = await account(app);
    const first = await lookup(acc.apiKey, '+14155550101,+14155550102,+14155550101');
    expect(first.body.data.map((d: { phoneNumber: string }) => d.phoneNumber)).to.deep.equal(['+14155550101', '+14155550102']);
    expect(first.body.chargedNumbers).to.equal(2);
    clock.advance(60_000);
    const again = await lookup(acc.apiKey, '+14155550102,+14155550103');
    expect(again.body.data.map((d: { cached: boolean }) => d.cached)).to.deep.equal([true, false]);
    expect(again.body.data[0].lookedUpAt).to.equal(first.body.data[1].lookedUpAt);
    expect(again.body).to.include({ chargedNumbers: 1, chargedMicros: 9_000 });
    expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(5_000_000 - 27_000);
    // another account pays for its own lookups
    const other = await account(app);
    expect((await lookup(other.apiKey, '+14155550101')).body.chargedNumbers).to.equal(1);
    // after the TTL the number is looked up (and charged) again
    clock.advance(3600_000);
    const stale = await lookup(acc.apiKey, '+14155550101');
    expect(stale.body).to.include({ chargedNumbers: 1 });
    expect(stale.body.data[0].cached).to.equal(false);
  });

  it('answers 402 (plain, needed and current balance) when the balance cannot cover the numbers to look up, charging and caching nothing', async () => {
    const acc = await account(app);
    const ctx = { accountId: acc.accountId, requestId: null, correlationId: 'drain', actor: 'test' };
    await app.rt
      .get(ACCOUNTS.Billing)
      .charge(ctx, acc.accountId, { chargeId: 'drain', amountMicros: 4_985_000, kind: 'number_lookup', description: 'drain' });
    // charged past the API, so nothing waited for the accounts' read model, which /v1/usage reads without waiting
    await projectorsCaughtUp(app, [accountsProjector]);
    const r = await lookup(acc.apiKey, '+14155550101,+14155550102');
    expect(r.status).to.equal(402);
    expect(r.body).to.have.keys(['detail', 'request_id']);
    expect(r.body.detail)
      .to.match(/\$0\.018/)
      .and.match(/\$0\.015/);
    expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(15_000);
    // one number fits
    expect((await lookup(acc.apiKey, '+14155550101')).body.chargedNumbers).to.equal(1);
    await credit(app, acc.accountId, 1_000_000);
    const after = await lookup(acc.apiKey, '+14155550101,+14155550102');
    expect(after.body.data.map((d: { cached: boolean }) => d.cached)).to.deep.equal([true, false]);
  });

  it('answers 502 when the carrier lookup fails, charging nothing', async () => {
    const acc = await account(app);
    await sandbox(app).fault({ operation: 'carrier.lookup' });
    const r = await lookup(acc.apiKey, '+14155550101');
    expect(r.status).to.equal(502);
    expect(r.body.error.code).to.equal('SMS_PROVIDER_ERROR');
    expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(5_000_000);
  });

  describe('validation', () => {
    it('refuses more than 25 numbers', async () => {
      const acc = await account(app);
      const numbers = Array.from({ length: 26 }, (_, i) => `+1415555${String(1000 + i)}`).join(',');
      const r = await lookup(acc.apiKey, numbers);
      expect(r.status).to.equal(422);
      expect(r.body.detail[0].loc).to.deep.equal(['query', 'phoneNumbers']);
      expect((await lookup(acc.apiKey, numbers.split(',').slice(0, 25).join(','))).status).to.equal(200);
    });
    it('names each number that is not E.164', async () => {
      const acc = await account(app);
      const r = await lookup(acc.apiKey, '+14155550101,4155550102,+1 415 555');
      expect(r.status).to.equal(422);
      expect(r.body.detail.map((d: { loc: unknown[] }) => d.loc)).to.deep.equal([
        ['query', 'phoneNumbers', 1],
        ['query', 'phoneNumbers', 2],
      ]);
      expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(5_000_000);
    });
    it('needs phoneNumbers', async () => {
      const acc = await account(app);
      expect((await app.call('GET', '/v1/numbers/lookup', { key: acc.apiKey })).status).to.equal(422);
      expect((await lookup(acc.apiKey, '')).status).to.equal(422);
    });
  });
});

import { expect } from 'chai';
import type { Kysely } from 'kysely';
import type { RecordingAddOnRenewalPass } from '../../application/recording-addon/recording-addon-renewals.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { RECORDING_ADDON } from '../../infrastructure/recording-addon/tokens.js';
import type { PassWorker } from '../../infrastructure/workers.js';
import { recordingAddOnProjector } from '../../projections/recording-addon/recording-addon.projector.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { TestClock } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { account, credit, eventually, usage } from '../support/numbers.js';

const DAY = 86_400_000;
const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

/**
 * The call-recording add-on (docs/recording-addon.md): $5.00 per 30-day period through Billing, charged once per
 * period whatever the retries, disabled to the end of its period, renewed or lapsed by the renewal job on a moved
 * clock, and each account's own. The job's timer is stopped while the tests run passes with `runOnce`, and
 * started again for the last test.
 */
describe('call-recording add-on', function () {
  this.timeout(60_000);
  let app: TestApp;
  let worker: PassWorker<RecordingAddOnRenewalPass>;
  const clock = new TestClock(new Date('2026-01-01T00:00:00.000Z'));
  before(async () => {
    app = await startTestApp({ NUMBER_RENEWAL_INTERVAL_MS: '100' }, { clock });
    worker = app.rt.workers.get('recording-addon-renewal') as PassWorker<RecordingAddOnRenewalPass>;
    await worker.stop();
  });
  after(() => app.close());

  type Auth = { key: string; headers?: Record<string, string> };
  const who = (a: Auth) => ({ key: a.key, ...(a.headers ? { headers: a.headers } : {}) });
  const get = (a: Auth) => app.call('GET', '/credits/recording', who(a));
  const enable = (a: Auth) => app.call('POST', '/credits/recording/enable', who(a));
  const disable = (a: Auth) => app.call('POST', '/credits/recording/disable', who(a));
  const isActive = (accountId: string, at: string) => app.rt.get(RECORDING_ADDON.Queries).isActive(accountId, new Date(at));
  /** the add-on's ledger entries of a paying account, oldest first */
  const charges = async (payer: string) =>
    (
      await app.rt.database.db
        .selectFrom('account_ledger')
        .select(['amount_micros', 'description', 'reference'])
        .where('account_id', '=', payer)
        .where('kind', '=', 'recording_addon')
        .orderBy('seq')
        .execute()
    ).map((r) => ({ amountMicros: Number(r.amount_micros), description: r.description, reference: r.reference }));
  const history = async (accountId: string) => (await app.rt.store.readStream(`recording_addon-${accountId}`)).map((e) => e.type);
  const balance = async (key: string) => (await usage(app, key)).balanceMicros;

  it('is off until enabled, and says so with its price', async () => {
    const acc = await account(app);
    const r = await get({ key: acc.apiKey });
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.equal({
      enabled: false,
      active: false,
      priceMicros: 5_000_000,
      price: '5.00',
      periodDays: 30,
      currentPeriodStart: null,
      currentPeriodEnd: null,
      renewsAt: null,
      endReason: null,
    });
    expect(await isActive(acc.accountId, clock.now().toISOString())).to.equal(false);
  });

  it('charges $5.00 for 30 days on enable, shows it in the ledger, and charges nothing more on a repeated enable', async () => {
    const acc = await account(app, { creditMicros: 10_000_000 });
    const now = clock.now().toISOString();
    const r = await enable({ key: acc.apiKey });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.include({
      enabled: true,
      active: true,
      currentPeriodStart: now,
      currentPeriodEnd: plus(now, 30 * DAY),
      renewsAt: plus(now, 30 * DAY),
      endReason: null,
    });
    expect(await balance(acc.apiKey)).to.equal(10_000_000);
    const ledger = (await app.call('GET', '/v1/billing/ledger', { key: acc.apiKey })).body.data[0];
    expect(ledger).to.include({ kind: 'recording_addon', amountMicros: -5_000_000, balanceMicros: 10_000_000, reference: acc.accountId });
    expect(ledger.description).to.equal('Call recording add-on: 30 days from 2026-01-01');

    const again = await enable({ key: acc.apiKey });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(r.body);
    expect(await charges(acc.accountId)).to.have.length(1);
    expect(await balance(acc.apiKey)).to.equal(10_000_000);
    expect(await history(acc.accountId)).to.deep.equal(['RecordingAddOnEnabled']);
    expect((await get({ key: acc.apiKey })).body).to.deep.equal(r.body);
  });

  it('charges exactly once under concurrent enables', async () => {
    const acc = await account(app, { creditMicros: 10_000_000 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => enable({ key: acc.apiKey })));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(8).fill(200));
    expect(new Set(answers.map((a) => a.body.currentPeriodEnd)).size).to.equal(1);
    expect(await charges(acc.accountId)).to.have.length(1);
    expect(await history(acc.accountId)).to.deep.equal(['RecordingAddOnEnabled']);
    expect(await balance(acc.apiKey)).to.equal(10_000_000);
  });

  it('answers 402 with the plain body naming the price and the balance when the balance is short, and writes nothing', async () => {
    const acc = await account(app);
    // a number's first month ($3.00) leaves $2.00 of the starting credit
    expect((await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '415' } })).status).to.equal(200);
    const r = await enable({ key: acc.apiKey });
    expect(r.status).to.equal(402);
    expect(Object.keys(r.body).sort()).to.deep.equal(['detail', 'request_id']);
    expect(r.body.detail).to.match(/^Insufficient balance: this needs \$5\.00 and the current balance is \$2\.00\./);
    expect(await history(acc.accountId)).to.deep.equal([]);
    expect(await charges(acc.accountId)).to.deep.equal([]);
    expect(await balance(acc.apiKey)).to.equal(2_000_000);
    expect((await get({ key: acc.apiKey })).body).to.include({ enabled: false, active: false });
  });

  it('rejects an unknown field on the paid enable with 422 and charges nothing', async () => {
    const acc = await account(app);
    const r = await app.call('POST', '/credits/recording/enable', { key: acc.apiKey, body: { plan: 'yearly' } });
    expect(r.status).to.equal(422);
    expect(await charges(acc.accountId)).to.deep.equal([]);
  });

  it('keeps a disabled add-on active until its period ends, refunds nothing, then expires it', async () => {
    const acc = await account(app, { creditMicros: 10_000_000 });
    clock.set('2026-02-01T00:00:00.000Z');
    await enable({ key: acc.apiKey });
    clock.set('2026-02-11T00:00:00.000Z');
    const r = await disable({ key: acc.apiKey });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({
      enabled: false,
      active: true,
      currentPeriodEnd: '2026-03-03T00:00:00.000Z',
      renewsAt: null,
      endReason: 'disabled',
    });
    expect(await balance(acc.apiKey)).to.equal(10_000_000);
    expect((await disable({ key: acc.apiKey })).body).to.deep.equal(r.body);

    clock.set('2026-03-02T23:59:59.999Z');
    await worker.runOnce();
    expect(await isActive(acc.accountId, clock.now().toISOString())).to.equal(true);
    clock.set('2026-03-03T00:00:00.000Z');
    expect(await isActive(acc.accountId, clock.now().toISOString())).to.equal(false); // no renewal grace: it does not renew
    await worker.runOnce();
    expect(await history(acc.accountId)).to.deep.equal(['RecordingAddOnEnabled', 'RecordingAddOnDisabled', 'RecordingAddOnExpired']);
    expect((await get({ key: acc.apiKey })).body).to.include({ enabled: false, active: false, endReason: 'disabled' });
    expect(await charges(acc.accountId)).to.have.length(1);
    // the paid period is still known
    expect(await isActive(acc.accountId, '2026-02-15T00:00:00.000Z')).to.equal(true);
  });

  it('resumes a disabled add-on within its period without charging', async () => {
    const acc = await account(app, { creditMicros: 10_000_000 });
    await enable({ key: acc.apiKey });
    await disable({ key: acc.apiKey });
    const r = await enable({ key: acc.apiKey });
    expect(r.body).to.include({ enabled: true, active: true, endReason: null });
    expect(await charges(acc.accountId)).to.have.length(1);
    expect(await history(acc.accountId)).to.deep.equal(['RecordingAddOnEnabled', 'RecordingAddOnDisabled', 'RecordingAddOnResumed']);
  });

  it('renews on a moved clock from the old period end, once per period, and stays active while the renewal is due', async () => {
    const acc = await account(app, { creditMicros: 10_000_000 });
    clock.set('2026-04-01T00:00:00.000Z');
    await enable({ key: acc.apiKey });
    clock.set('2026-04-30T23:59:59.000Z');
    await worker.runOnce();
    expect(await charges(acc.accountId)).to.have.length(1); // not due yet

    clock.set('2026-05-01T00:00:30.000Z');
    // due, and the job has not passed yet: calls are still recorded
    expect(await isActive(acc.accountId, clock.now().toISOString())).to.equal(true);
    expect((await get({ key: acc.apiKey })).body).to.include({ enabled: true, active: true });
    await worker.runOnce();
    await worker.runOnce();
    const view = (await get({ key: acc.apiKey })).body;
    expect(view).to.include({
      enabled: true,
      active: true,
      currentPeriodStart: '2026-05-01T00:00:00.000Z',
      currentPeriodEnd: '2026-05-31T00:00:00.000Z',
      renewsAt: '2026-05-31T00:00:00.000Z',
    });
    expect(await charges(acc.accountId)).to.deep.equal([
      { amountMicros: -5_000_000, description: 'Call recording add-on: 30 days from 2026-04-01', reference: acc.accountId },
      { amountMicros: -5_000_000, description: 'Call recording add-on: renewal, 30 days from 2026-05-01', reference: acc.accountId },
    ]);
    expect(await balance(acc.apiKey)).to.equal(5_000_000);
    expect(await history(acc.accountId)).to.deep.equal(['RecordingAddOnEnabled', 'RecordingAddOnRenewed']);
  });

  it('lets a renewal the balance cannot cover lapse: recorded, never a negative balance, enabled again after a top-up', async () => {
    const acc = await account(app); // $5.00: exactly one period
    clock.set('2026-06-01T00:00:00.000Z');
    await enable({ key: acc.apiKey });
    expect(await balance(acc.apiKey)).to.equal(0);

    clock.set('2026-07-01T00:00:10.000Z');
    await worker.runOnce();
    expect(await balance(acc.apiKey)).to.equal(0);
    const lapsed = (await app.rt.store.readStream(`recording_addon-${acc.accountId}`)).at(-1)!;
    expect(lapsed.type).to.equal('RecordingAddOnLapsed');
    expect(lapsed.data).to.include({ period: 1, neededMicros: 5_000_000, balanceMicros: 0, paidThrough: '2026-07-01T00:00:00.000Z' });
    expect((await get({ key: acc.apiKey })).body).to.include({
      enabled: false,
      active: false,
      endReason: 'payment_failed',
      renewsAt: null,
    });
    expect(await isActive(acc.accountId, clock.now().toISOString())).to.equal(false);
    await worker.runOnce();
    expect(await history(acc.accountId)).to.deep.equal(['RecordingAddOnEnabled', 'RecordingAddOnLapsed']);

    await credit(app, acc.accountId, 5_000_000);
    clock.set('2026-07-03T00:00:00.000Z');
    const r = await enable({ key: acc.apiKey });
    expect(r.body).to.include({ enabled: true, active: true, currentPeriodEnd: '2026-08-02T00:00:00.000Z', endReason: null });
    expect(await charges(acc.accountId)).to.have.length(2);
    expect(await balance(acc.apiKey)).to.equal(0);
  });

  it('answers isActive over time: before, within and after each period', async () => {
    const acc = await account(app, { creditMicros: 10_000_000 });
    clock.set('2026-08-10T00:00:00.000Z');
    await enable({ key: acc.apiKey });
    clock.set('2026-08-20T00:00:00.000Z');
    await disable({ key: acc.apiKey });
    clock.set('2026-09-09T00:00:00.000Z');
    await worker.runOnce();
    clock.set('2026-09-20T00:00:00.000Z');
    await enable({ key: acc.apiKey });
    const at = (iso: string) => isActive(acc.accountId, iso);
    expect([
      await at('2026-08-09T23:59:59.999Z'),
      await at('2026-08-10T00:00:00.000Z'),
      await at('2026-09-08T23:59:59.999Z'),
      await at('2026-09-09T00:00:00.000Z'),
      await at('2026-09-19T23:59:59.999Z'),
      await at('2026-09-20T00:00:00.000Z'),
      await at('2026-10-19T23:59:59.999Z'),
      await at('2026-10-20T12:00:00.000Z'), // renewal grace: it renews
      await at('2026-10-21T00:00:00.000Z'),
    ]).to.deep.equal([false, true, true, false, false, true, true, true, false]);
  });

  it("makes a sub-account's add-on its own, charged to its parent", async () => {
    const parent = await account(app, { creditMicros: 10_000_000 });
    const sub = await app.newAccount('Recording sub', parent.accountId);
    const asSub = { key: parent.apiKey, headers: { 'x-sub-account-id': sub.accountId } };
    const r = await enable(asSub);
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ enabled: true, active: true });
    expect((await get({ key: parent.apiKey })).body).to.include({ enabled: false, active: false });
    expect((await get(asSub)).body).to.include({ enabled: true });
    expect(await charges(parent.accountId)).to.deep.equal([
      {
        amountMicros: -5_000_000,
        description: `Call recording add-on: 30 days from ${clock.now().toISOString().slice(0, 10)}`,
        reference: sub.accountId,
      },
    ]);
    expect(await balance(parent.apiKey)).to.equal(10_000_000);
    const now = clock.now().toISOString();
    expect([await isActive(sub.accountId, now), await isActive(parent.accountId, now)]).to.deep.equal([true, false]);
  });

  it('shows another account nothing, and refuses a sub-account that is not ours', async () => {
    const a = await account(app, { creditMicros: 10_000_000 });
    const b = await account(app);
    const bSub = await app.newAccount('B sub', b.accountId);
    await enable({ key: a.apiKey });
    expect((await get({ key: b.apiKey })).body).to.include({ enabled: false, active: false, currentPeriodEnd: null });
    expect(await isActive(b.accountId, clock.now().toISOString())).to.equal(false);
    for (const call of [get, enable, disable]) {
      const r = await call({ key: a.apiKey, headers: { 'x-sub-account-id': bSub.accountId } });
      expect(r.status).to.equal(403);
    }
    expect(await charges(b.accountId)).to.deep.equal([]);
  });

  it("never charges a parent again for a closed sub-account's add-on: it expires at its period end", async () => {
    const parent = await account(app, { creditMicros: 10_000_000 });
    const sub = await app.newAccount('Closing sub', parent.accountId);
    clock.set('2026-10-01T00:00:00.000Z');
    await enable({ key: parent.apiKey, headers: { 'x-sub-account-id': sub.accountId } });
    expect((await app.call('DELETE', `/v1/sub-accounts/${sub.accountId}`, { key: parent.apiKey })).status).to.equal(200);
    clock.set('2026-10-31T00:00:01.000Z');
    await worker.runOnce();
    const last = (await app.rt.store.readStream(`recording_addon-${sub.accountId}`)).at(-1)!;
    expect(last.type).to.equal('RecordingAddOnExpired');
    expect(last.data).to.include({ reason: 'account_closed', paidThrough: '2026-10-31T00:00:00.000Z' });
    expect(await charges(parent.accountId)).to.have.length(1);
    expect(await isActive(sub.accountId, clock.now().toISOString())).to.equal(false);
  });

  it('needs an API key at the documented paths, which the API description lists', async () => {
    expect((await app.call('GET', '/credits/recording')).status).to.equal(401);
    const bad = await app.call('POST', '/credits/recording/enable', { key: 'avp_not-a-key' });
    expect(bad.status).to.equal(401);
    expect(bad.body).to.have.property('detail');
    const acc = await account(app);
    expect((await get({ key: acc.apiKey })).status).to.equal(200);
    expect((await app.call('GET', '/credits/recording/nothing-here', { key: acc.apiKey })).status).to.equal(404);
    const doc = (await app.call('GET', '/openapi.json')).body;
    expect(doc.paths['/credits/recording/enable']).to.have.property('post');
    expect(doc.paths['/credits/recording/disable']).to.have.property('post');
    expect(doc.paths['/credits/recording']).to.have.property('get');
    expect(doc.paths['/credits/recording/enable'].post.responses).to.have.property('402');
  });

  it('rebuilds the add-on read model to the same rows', async () => {
    const report = await rebuildProjector(app.rt.get(PLATFORM.ReadDb) as Kysely<ReadDb>, app.rt.store, recordingAddOnProjector, {
      checkOnly: true,
    });
    expect(report.equal).to.equal(true);
  });

  it('renews by itself on its interval', async () => {
    await worker.start();
    const acc = await account(app, { creditMicros: 5_000_000 });
    clock.set('2026-11-01T00:00:00.000Z');
    await enable({ key: acc.apiKey });
    clock.set('2026-12-01T00:00:05.000Z');
    await eventually(
      async () => (await get({ key: acc.apiKey })).body.currentPeriodEnd === '2026-12-31T00:00:00.000Z',
      'renewed by the job',
    );
    expect(await balance(acc.apiKey)).to.equal(0);
  });
});

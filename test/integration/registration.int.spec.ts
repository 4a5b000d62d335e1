import { expect } from 'chai';
import type { Kysely } from 'kysely';
import { REGISTRATION } from '../../infrastructure/registration/tokens.js';
import type { PassWorker } from '../../infrastructure/workers.js';
import { registrationsProjector } from '../../projections/registration/registrations.projector.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { TestClock } from '../support/fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { REGISTRATION as VALID_REGISTRATION } from '../support/messaging.js';
import { account, usage } from '../support/numbers.js';

const FEE = 25_000_000;
const START = 5_000_000; // every account's starting credit

/** A valid sole-proprietor registration; `over` replaces fields. */
const registration = (over: Record<string, unknown> = {}) => ({ ...VALID_REGISTRATION, phone_number: '+15551234567', ...over });

/**
 * US A2P 10DLC registration over HTTP: status none -> pending -> approved after the sandbox delay on a
 * TestClock; the fee charged once to the paying account; validation; sub-accounts. The review's own timer is
 * stopped: the tests move the clock and run passes with `runOnce`.
 */
describe('A2P 10DLC registration', function () {
  this.timeout(30_000);
  let app: TestApp;
  let review: PassWorker<{ approved: number }>;
  const clock = new TestClock(new Date('2026-03-01T12:00:00.000Z'));
  before(async () => {
    app = await startTestApp({ SANDBOX_REGISTRATION_APPROVAL_SECONDS: '30' }, { clock });
    review = app.rt.workers.get('sandbox-registration-review') as PassWorker<{ approved: number }>;
    await review.stop();
  });
  after(() => app.close());

  const status = async (key: string, sub?: string) =>
    (await app.call('GET', '/v1/register/status', { key, ...(sub ? { headers: { 'x-sub-account-id': sub } } : {}) })).body;
  const register = (key: string, body: unknown, sub?: string) =>
    app.call('POST', '/v1/register', { key, body, ...(sub ? { headers: { 'x-sub-account-id': sub } } : {}) });
  const fees = async (accountId: string) =>
    (
      await app.rt.database.db
        .selectFrom('account_ledger')
        .select(['amount_micros'])
        .where('account_id', '=', accountId)
        .where('kind', '=', 'a2p_registration')
        .execute()
    ).map((r) => Number(r.amount_micros));

  it('goes none -> pending -> approved once the sandbox delay has passed on the Clock', async () => {
    const acc = await account(app, { creditMicros: FEE });
    expect(await status(acc.apiKey)).to.deep.equal({
      campaign_status: 'none',
      message: 'No registration submitted. POST /v1/register to register for US SMS.',
      stage: null,
    });
    const r = await register(acc.apiKey, registration());
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.include({ ok: true, campaign_status: 'pending', sub_account_id: null, fee_cents: 2500 });
    expect(await status(acc.apiKey)).to.include({ campaign_status: 'pending', stage: 'carrier_review' });

    clock.advance(29_000);
    await review.runOnce();
    expect(await status(acc.apiKey)).to.include({ campaign_status: 'pending' });
    clock.advance(1_000);
    expect((await review.runOnce()).approved).to.be.at.least(1);
    expect(await status(acc.apiKey)).to.include({ campaign_status: 'approved', stage: 'approved' });
    expect(await app.rt.get(REGISTRATION.Status).statusOf(acc.accountId)).to.equal('approved');
    expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(START);
  });

  it('charges the fee once for a retried request, and refuses different content while pending (409)', async () => {
    const acc = await account(app, { creditMicros: 2 * FEE });
    const first = await register(acc.apiKey, registration());
    const again = await register(acc.apiKey, registration());
    expect(again.status).to.equal(200);
    expect(again.body).to.include({ ok: true, campaign_status: 'pending', fee_cents: 0 });
    const other = await register(acc.apiKey, registration({ city: 'Chicago' }));
    expect(other.status).to.equal(409);
    expect(other.body.error).to.include({ code: 'REGISTRATION_IN_REVIEW', type: 'conflict_error' });
    expect(first.body.fee_cents).to.equal(2500);
    expect(await fees(acc.accountId)).to.deep.equal([-FEE]);
    expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(START + FEE);
  });

  it('charges one fee when the same request arrives twice at once', async () => {
    const acc = await account(app, { creditMicros: 2 * FEE });
    const [a, b] = await Promise.all([register(acc.apiKey, registration()), register(acc.apiKey, registration())]);
    expect([a.status, b.status]).to.deep.equal([200, 200]);
    expect(await fees(acc.accountId)).to.deep.equal([-FEE]);
  });

  it('answers 402 (plain) when the balance cannot cover the fee, and records nothing', async () => {
    const acc = await account(app);
    const r = await register(acc.apiKey, registration({ create_sub_account: true }));
    expect(r.status).to.equal(402);
    expect(r.body).to.have.property('detail');
    expect(await status(acc.apiKey)).to.include({ campaign_status: 'none' });
    expect((await app.call('GET', '/v1/sub-accounts', { key: acc.apiKey })).body.data).to.deep.equal([]);
    const own = await register(acc.apiKey, registration());
    expect(own.status).to.equal(402);
    expect(await status(acc.apiKey)).to.include({ campaign_status: 'none' });
  });

  it('lets a rejected registration be submitted again, for a new fee', async () => {
    const acc = await account(app, { creditMicros: 2 * FEE });
    await register(acc.apiKey, registration());
    const rej = await app.call('POST', `/sandbox/registrations/${acc.accountId}/reject`, {
      key: ADMIN_TOKEN,
      body: { reason: 'brand could not be verified' },
    });
    expect(rej.status).to.equal(200);
    expect(rej.body).to.include({ campaign_status: 'rejected', stage: 'rejected' });
    expect(await status(acc.apiKey)).to.include({ campaign_status: 'rejected' });
    expect((await status(acc.apiKey)).message).to.contain('brand could not be verified');
    const again = await register(acc.apiKey, registration());
    expect(again.body).to.include({ campaign_status: 'pending', fee_cents: 2500 });
    expect(await fees(acc.accountId)).to.deep.equal([-FEE, -FEE]);
  });

  describe('sub-accounts', () => {
    it('opens a sub-account for the registration by default, charges the master, and a retry reuses both', async () => {
      const master = await account(app, { creditMicros: FEE });
      const body = registration({ create_sub_account: undefined });
      const r = await register(master.apiKey, body);
      expect(r.status).to.equal(200);
      const sub = r.body.sub_account_id as string;
      expect(sub).to.be.a('string');
      const subs = (await app.call('GET', '/v1/sub-accounts', { key: master.apiKey })).body.data;
      expect(subs.map((s: { id: string }) => s.id)).to.deep.equal([sub]);

      const retry = await register(master.apiKey, body);
      expect(retry.body).to.include({ sub_account_id: sub, fee_cents: 0 });
      expect((await app.call('GET', '/v1/sub-accounts', { key: master.apiKey })).body.data).to.have.length(1);
      expect(await fees(master.accountId)).to.deep.equal([-FEE]);
      expect(await fees(sub)).to.deep.equal([]);

      // the master itself is not registered; the sub-account is, seen through X-Sub-Account-Id
      expect(await status(master.apiKey)).to.include({ campaign_status: 'none' });
      expect(await status(master.apiKey, sub)).to.include({ campaign_status: 'pending' });
    });

    it("covers a sub-account without a registration of its own by its master's", async () => {
      const master = await account(app, { creditMicros: FEE });
      const sub = (await app.call('POST', '/v1/sub-accounts', { key: master.apiKey, body: { name: 'team' } })).body.id as string;
      expect(await status(master.apiKey, sub)).to.include({ campaign_status: 'none' });
      await register(master.apiKey, registration());
      const seen = await status(master.apiKey, sub);
      expect(seen).to.include({ campaign_status: 'pending' });
      expect(seen.message).to.match(/^Covered by the master account's registration/);
      expect(await app.rt.get(REGISTRATION.Status).statusOf(sub)).to.equal('pending');
    });

    it('registers the acting sub-account itself, charged to its master', async () => {
      const master = await account(app, { creditMicros: FEE });
      const sub = (await app.call('POST', '/v1/sub-accounts', { key: master.apiKey, body: { name: 'team' } })).body.id as string;
      const r = await register(master.apiKey, registration({ create_sub_account: true }), sub);
      expect(r.body).to.include({ campaign_status: 'pending', sub_account_id: sub });
      expect(await status(master.apiKey, sub)).to.include({ campaign_status: 'pending' });
      expect(await status(master.apiKey)).to.include({ campaign_status: 'none' });
      expect(await fees(master.accountId)).to.deep.equal([-FEE]);
    });

    it("does not show one account's registration to another", async () => {
      const a = await account(app, { creditMicros: FEE });
      const b = await account(app);
      await register(a.apiKey, registration());
      expect(await status(b.apiKey)).to.include({ campaign_status: 'none' });
      const r = await app.call('GET', '/v1/register/status', { key: b.apiKey, headers: { 'x-sub-account-id': a.accountId } });
      expect(r.status).to.equal(403);
    });
  });

  describe('validation (422, nothing recorded)', () => {
    let acc: { accountId: string; apiKey: string };
    before(async () => {
      acc = await account(app, { creditMicros: FEE });
    });
    const refused = async (body: unknown, field: string) => {
      const r = await register(acc.apiKey, body);
      expect(r.status, JSON.stringify(r.body)).to.equal(422);
      expect(r.body.error.code).to.equal('VALIDATION_ERROR');
      const fields = (r.body.error.details as { field: string }[]).map((d) => d.field);
      expect(
        fields.some((f) => f === field || f.startsWith(`${field}.`)),
        JSON.stringify(fields),
      ).to.equal(true);
    };
    const without = (field: string) => {
      const b: Record<string, unknown> = registration();
      delete b[field];
      return b;
    };

    for (const field of [
      'registration_type',
      'first_name',
      'email',
      'phone_number',
      'street_address',
      'description',
      'use_cases',
      'consent_flow',
      'opt_in_image_url',
    ])
      it(`requires ${field}`, () => refused(without(field), field));

    it('checks the enums', () => refused(registration({ registration_type: 'enterprise' }), 'registration_type'));
    it('checks the e-mail address', () => refused(registration({ email: 'not-an-email' }), 'email'));
    it('wants an E.164 phone number', () => refused(registration({ phone_number: '555-123-4567' }), 'phone_number'));
    it('wants an https opt-in image URL', () =>
      refused(registration({ opt_in_image_url: 'http://acme.example/x.png' }), 'opt_in_image_url'));
    it('wants 2 to 5 message samples', () =>
      refused(registration({ message_samples: ['Acme: only one sample here.'] }), 'message_samples'));
    it('wants the brand name in each sample', () =>
      refused(
        registration({ message_samples: ['Acme: your appointment is tomorrow.', 'Your appointment is tomorrow at ten.'] }),
        'message_samples',
      ));
    it('wants a description of 40 characters or more', () => refused(registration({ description: 'too short' }), 'description'));
    it('wants 1 to 5 use cases', () => refused(registration({ use_cases: [] }), 'use_cases'));
    it('wants a link sample when messages include links', () => refused(registration({ includes: ['links'] }), 'link_sample'));
    it('requires the business fields of a standard brand', async () => {
      for (const field of ['business_name', 'organization_type', 'contact_title', 'ein', 'privacy_policy_url', 'terms_of_service_url'])
        await refused(
          registration({
            registration_type: 'standard_brand',
            business_name: 'Acme Inc',
            brand_name: 'Acme',
            organization_type: 'llc',
            contact_title: 'ceo',
            ein: '12-3456789',
            privacy_policy_url: 'https://acme.example/privacy',
            terms_of_service_url: 'https://acme.example/terms',
            [field]: null,
          }),
          field,
        );
    });
    it('refuses an unknown field of this paid operation', () => refused(registration({ feeCents: 0 }), 'feeCents'));

    after(async () => {
      expect(await status(acc.apiKey)).to.include({ campaign_status: 'none' });
      expect(await fees(acc.accountId)).to.deep.equal([]);
    });
  });

  it('accepts a complete standard brand registration', async () => {
    const acc = await account(app, { creditMicros: FEE });
    const r = await register(
      acc.apiKey,
      registration({
        registration_type: 'standard_brand',
        business_name: 'Acme Inc',
        organization_type: 'llc',
        contact_title: 'other',
        contact_title_other: 'Head of messaging',
        ein: '12-3456789',
        privacy_policy_url: 'https://acme.example/privacy',
        terms_of_service_url: 'https://acme.example/terms',
        includes: ['links'],
        link_sample: 'https://acme.example/b/123',
      }),
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
  });

  it('rebuilds the registrations read model to the same rows', async () => {
    const report = await rebuildProjector(app.rt.database.db as unknown as Kysely<ReadDb>, app.rt.store, registrationsProjector, {
      checkOnly: true,
    });
    expect(report.equal).to.equal(true);
  });
});

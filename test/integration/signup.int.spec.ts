import { expect } from 'chai';
import type { Kysely } from 'kysely';
import type { SignUpRecoveryWorker } from '../../infrastructure/signup/signup-recovery.worker.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { TestClock } from '../support/fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { eventually, sandbox } from '../support/numbers.js';

describe('self-service sign-up', function () {
  this.timeout(60_000);
  let app: TestApp;
  const clock = new TestClock(new Date());
  before(async () => {
    app = await startTestApp({ SIGNUP_MAX_PER_EMAIL_PER_HOUR: '3', SIGNUP_MAX_PER_CLIENT_PER_HOUR: '50' }, { clock });
  });
  after(() => app.close());

  const signUp = (email: string, agentName?: string) =>
    app.call('POST', '/v0/agent/sign-up', { body: { human_email: email, ...(agentName ? { agent_name: agentName } : {}) } });
  const codeFor = async (email: string): Promise<string> => {
    const r = await app.call('GET', `/sandbox/outbox?email=${encodeURIComponent(email)}`, { key: ADMIN_TOKEN });
    expect(r.status).to.equal(200);
    return r.body.data[0].code as string;
  };
  const verify = (verificationId: string, code: string) =>
    app.call('POST', '/v0/agent/verify', { body: { verification_id: verificationId, otp_code: code, source: 'test' } });
  const accountsOf = async (email: string) =>
    (app.rt.database.db as unknown as Kysely<ReadDb>)
      .selectFrom('accounts')
      .select(['account_id', 'status'])
      .where('owner_email', '=', email)
      .execute();

  it('goes from sign-up to a first API call: account, hosted agent, number, first charge, key', async () => {
    const req = await signUp('Ada@Example.com', 'Ada Bot');
    expect(req.status).to.equal(200);
    expect(req.body.verification_id).to.match(/^ver_/);
    expect(await accountsOf('ada@example.com'), 'nothing provisioned before verify').to.deep.equal([]);
    const code = await codeFor('ada@example.com');
    expect(code).to.match(/^\d{6}$/);
    const v = await verify(req.body.verification_id, code);
    expect(v.status, JSON.stringify(v.body)).to.equal(200);
    expect(v.body.api_key).to.match(/^avp_/);
    expect(v.body.phone_number).to.match(/^\+1\d{10}$/);
    const key = v.body.api_key as string;
    const agents = await app.call('GET', '/v1/agents', { key });
    expect(agents.body.data).to.have.length(1);
    expect(agents.body.data[0]).to.include({ id: v.body.agent_id, name: 'Ada Bot', voiceMode: 'hosted' });
    expect(agents.body.data[0].numbers.map((n: { id: string }) => n.id)).to.deep.equal([v.body.number_id]);
    const usage = await app.call('GET', '/v1/usage', { key });
    expect(usage.body.balance.micros).to.equal(2_000_000);
    expect(usage.body.numbers).to.deep.equal({ used: 1, limit: 10, remaining: 9 });
    const ledger = await app.call('GET', '/v1/billing/ledger', { key });
    expect(ledger.body.data[0]).to.include({ amountMicros: -3_000_000, kind: 'number_monthly' });
  });

  it('does not create a second account when verify is repeated, and returns no second key', async () => {
    const req = await signUp('grace@example.com');
    const code = await codeFor('grace@example.com');
    const first = await verify(req.body.verification_id, code);
    const again = await verify(req.body.verification_id, code);
    expect(again.status).to.equal(200);
    expect(again.body.account_id).to.equal(first.body.account_id);
    expect(again.body.api_key).to.equal(null);
    expect(await accountsOf('grace@example.com')).to.have.length(1);
    expect((await app.call('GET', '/v1/agents', { key: first.body.api_key })).status).to.equal(200);
  });

  it('counts wrong codes and locks after five', async () => {
    const req = await signUp('mallory@example.com');
    const code = await codeFor('mallory@example.com');
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 1; i <= 5; i++) {
      const r = await verify(req.body.verification_id, wrong);
      expect(r.status).to.equal(400);
      expect(r.body.error.message).to.contain(`${5 - i}`);
    }
    const locked = await verify(req.body.verification_id, code);
    expect(locked.status).to.equal(429);
    expect(await accountsOf('mallory@example.com')).to.deep.equal([]);
  });

  it('refuses a code after ten minutes', async () => {
    const req = await signUp('late@example.com');
    const code = await codeFor('late@example.com');
    clock.advance(601_000);
    const r = await verify(req.body.verification_id, code);
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('SIGNUP_CODE_EXPIRED');
  });

  it('throttles sign-up requests per e-mail address with 429 and Retry-After', async () => {
    for (let i = 0; i < 3; i++) expect((await signUp('spam@example.com')).status).to.equal(200);
    const r = await signUp('spam@example.com');
    expect(r.status).to.equal(429);
    expect(r.body).to.have.keys(['detail', 'request_id']);
    expect(Number(r.headers.get('retry-after'))).to.be.within(1, 3600);
    clock.advance(3601_000);
    expect((await signUp('spam@example.com')).status).to.equal(200);
  });

  it('validates the bodies', async () => {
    expect((await app.call('POST', '/v0/agent/sign-up', { body: { human_email: 'not-an-email' } })).status).to.equal(422);
    expect((await app.call('POST', '/v0/agent/verify', { body: { verification_id: 'ver_x', otp_code: '12ab56' } })).status).to.equal(422);
    expect((await verify('ver_unknown', '123456')).status).to.equal(404);
  });

  it('leaves no visible account when provisioning fails midway, and finishes it on recovery', async () => {
    await sandbox(app).fault({ operation: 'carrier.purchase', error: 'SMS_PROVIDER_ERROR', times: 10 });
    const req = await signUp('crash@example.com', 'Crash Test');
    const code = await codeFor('crash@example.com');
    const failed = await verify(req.body.verification_id, code);
    expect(failed.status).to.be.within(500, 599);
    const pending = await accountsOf('crash@example.com');
    expect(pending.map((a) => a.status)).to.deep.equal(['pending']);
    await sandbox(app).clearFaults();
    clock.advance(60_000);
    // recovery asks the sign-up process to run the steps again; the process finishes it
    const recovery = app.rt.workers.get('signup-recovery') as SignUpRecoveryWorker;
    expect(await recovery.runOnce()).to.equal(1);
    await eventually(async () => (await accountsOf('crash@example.com')).map((a) => a.status).join() === 'active', 'the account activated');
    expect((await accountsOf('crash@example.com')).map((a) => a.status)).to.deep.equal(['active']);
    // the person retries verify with the code: the interrupted sign-up's key never reached them, so a new one is issued
    const retried = await verify(req.body.verification_id, code);
    expect(retried.status).to.equal(200);
    expect(retried.body.api_key).to.match(/^avp_/);
    expect((await app.call('GET', '/v1/agents', { key: retried.body.api_key })).body.data[0].name).to.equal('Crash Test');
  });
});

describe('self-service sign-up in live mode without SMTP_URL', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ PROVIDER_MODE: 'live', SMTP_URL: '' });
  });
  after(() => app?.close());

  it('answers 503 EMAIL_NOT_CONFIGURED naming SMTP_URL, records nothing and keeps no code in any mailbox', async () => {
    const r = await app.call('POST', '/v0/agent/sign-up', { body: { human_email: 'live@example.com' } });
    expect(r.status, JSON.stringify(r.body)).to.equal(503);
    expect(r.body.error).to.include({ code: 'EMAIL_NOT_CONFIGURED', type: 'api_error' });
    expect(r.body.error.message).to.include('SMTP_URL');
    expect(r.body.request_id).to.equal(r.headers.get('x-request-id'));
    // (with EventStoreDB the log keeps other tests' sign-ups: only this address counts)
    const requested = await app.rt.store.readAll({ filter: { eventTypes: ['SignUpRequested'] } });
    expect(requested.filter((e) => (e.data as { email?: string }).email === 'live@example.com')).to.deep.equal([]);
    const kept = await app.rt.database.db
      .selectFrom('sandbox_outbox' as never)
      .selectAll()
      .where('to_address' as never, '=', 'live@example.com' as never)
      .execute();
    expect(kept).to.deep.equal([]);
    // live mode serves no sandbox mailbox either
    expect((await app.call('GET', '/sandbox/outbox?email=live@example.com', { key: ADMIN_TOKEN })).status).to.equal(404);
  });
});

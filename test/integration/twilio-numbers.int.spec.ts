import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { SmsSubmissionError } from '../../application/messaging/sms-carrier.port.js';
import { TWILIO } from '../../infrastructure/carriers/twilio/tokens.js';
import { purchaseName } from '../../infrastructure/carriers/twilio/twilio-numbers.js';
import { loadConfig } from '../../infrastructure/config/config.js';
import { FAKE_TRUNK_SID, type FakeTwilio } from '../support/fake-twilio.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { account, eventually, startAppOn, usage } from '../support/numbers.js';
import { startServerProcess } from '../support/server-process.js';
import { TWILIO_PUBLIC_URL, twilioEnv, useFakeTwilio } from '../support/twilio.js';

/**
 * Numbers and lookups on Twilio through the public API (docs/carriers.md): a live start with CARRIER=twilio whose
 * Twilio is the fake of test/support/fake-twilio.ts, every request of which passes the contract mocks of Twilio's
 * published documents.
 */
describe('Twilio carrier: numbers and lookups', function () {
  this.timeout(120_000);
  const twilio = useFakeTwilio();
  let fake: FakeTwilio;
  before(() => {
    fake = twilio();
  });

  describe('through the API', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp(twilioEnv(fake));
      fake.deliverTo(app.url);
    });
    after(() => app?.close());

    const post = (key: string, body: Record<string, unknown>) => app.call('POST', '/v1/numbers', { key, body });
    const keyOf = (numberId: string) => `${numberId}:1`;

    it('buys a number at Twilio, routes its texts to the platform and its calls to the SIP trunk, and charges the month here', async () => {
      const acc = await account(app);
      const r = await post(acc.apiKey, { areaCode: '415' });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.include({ status: 'active', country: 'US', areaCode: '415' });
      const bought = fake.byPhone(r.body.phoneNumber)!;
      expect(bought).to.deep.include({
        friendly_name: purchaseName(keyOf(r.body.id)),
        sms_url: `${TWILIO_PUBLIC_URL}/integrations/twilio/messages`,
        sms_method: 'POST',
        trunk_sid: FAKE_TRUNK_SID,
      });
      const u = await usage(app, acc.apiKey);
      expect(u.balanceMicros).to.equal(5_000_000 - 3_000_000);
      expect(u.used).to.equal(1);
    });

    it('buys once when Twilio performed the purchase but its answer was lost', async () => {
      const acc = await account(app);
      fake.fail('CreateIncomingPhoneNumber', 'lose-answer');
      const r = await post(acc.apiKey, { areaCode: '646' });
      expect(r.status).to.equal(200);
      const held = [...fake.numbers.values()].filter((n) => n.friendly_name === purchaseName(keyOf(r.body.id)));
      expect(held.map((n) => n.phone_number)).to.deep.equal([r.body.phoneNumber]);
    });

    it('answers 409 when Twilio has nothing for sale in the area code, and gives the slot back', async () => {
      const acc = await account(app);
      const r = await post(acc.apiKey, { areaCode: '907' });
      expect(r.status).to.equal(409);
      expect(r.body.detail).to.match(/unavailable/);
      expect((await usage(app, acc.apiKey)).used).to.equal(0);
    });

    it('answers 502 when Twilio refuses the routing, and releases the number it had bought', async () => {
      const acc = await account(app);
      const before = fake.sent('DeleteIncomingPhoneNumber').length;
      fake.fail('UpdateIncomingPhoneNumber', { status: 400, code: 21606, message: 'Invalid SmsUrl' });
      const r = await post(acc.apiKey, { areaCode: '720' });
      expect(r.status).to.equal(502);
      expect(r.body.error.code).to.equal('SMS_PROVIDER_ERROR');
      expect(r.body.error.message).to.include('21606');
      expect(fake.sent('DeleteIncomingPhoneNumber')).to.have.length(before + 1);
      expect([...fake.numbers.values()].filter((n) => n.phone_number.startsWith('+1720'))).to.deep.equal([]);
      const u = await usage(app, acc.apiKey);
      expect([u.used, u.balanceMicros]).to.deep.equal([0, 5_000_000]);
    });

    it('releases the number at Twilio on DELETE; a refused release keeps it active (502)', async () => {
      const acc = await account(app);
      const n = (await post(acc.apiKey, { areaCode: '312' })).body;
      fake.fail('DeleteIncomingPhoneNumber', { status: 403, code: 20003, message: 'Permission denied' });
      const refused = await app.call('DELETE', `/v1/numbers/${n.id}`, { key: acc.apiKey });
      expect(refused.status).to.equal(502);
      expect(fake.byPhone(n.phoneNumber)).to.not.equal(undefined);
      const r = await app.call('DELETE', `/v1/numbers/${n.id}`, { key: acc.apiKey });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.include({ success: true, status: 'released' });
      expect(fake.byPhone(n.phoneNumber)).to.equal(undefined);
    });

    it('looks numbers up through Lookup v2, charges $0.009 each and answers from the cache the second time', async () => {
      const acc = await account(app);
      const q = '/v1/numbers/lookup?phoneNumbers=%2B14155550100,%2B14155550101,%2B14155550103';
      const first = await app.call('GET', q, { key: acc.apiKey });
      expect(first.status).to.equal(200);
      expect(first.body.data.map((d: { lineType: string }) => d.lineType)).to.deep.equal(['mobile', 'landline', 'voip']);
      expect(first.body.data[0]).to.deep.include({ valid: true, country: 'US', carrierName: 'Fake mobile carrier', cached: false });
      expect([first.body.chargedNumbers, first.body.chargedMicros]).to.deep.equal([3, 27_000]);
      const asked = fake.sent('FetchPhoneNumber').length;
      const again = await app.call('GET', q, { key: acc.apiKey });
      expect(again.body.data.every((d: { cached: boolean }) => d.cached)).to.equal(true);
      expect(again.body.chargedMicros).to.equal(0);
      expect(fake.sent('FetchPhoneNumber')).to.have.length(asked);
      expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(5_000_000 - 27_000);
    });

    it('answers 502 and charges nothing when Twilio does not answer a lookup', async () => {
      const acc = await account(app);
      fake.fail('FetchPhoneNumber', { status: 500, code: 20500, message: 'Internal' });
      const r = await app.call('GET', '/v1/numbers/lookup?phoneNumbers=%2B13125550180', { key: acc.apiKey });
      expect(r.status).to.equal(502);
      expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(5_000_000);
    });
  });

  describe('texts handed to Twilio (the SmsCarrierPort)', () => {
    let app: TestApp;
    let from: string;
    before(async () => {
      app = await startTestApp(twilioEnv(fake));
      fake.deliverTo(app.url);
      const acc = await account(app);
      from = (await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '404' } })).body.phoneNumber;
    });
    after(() => app?.close());
    const texts = () => app.rt.get(TWILIO.Texts);
    const sms = (key: string, to: string, o: { body?: string; mediaUrls?: string[] } = {}) => ({
      idempotencyKey: key,
      accountId: 'acc_t',
      from,
      to,
      body: o.body ?? `Hello ${key}`,
      mediaUrls: o.mediaUrls ?? [],
    });
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: unknown) => (e instanceof SmsSubmissionError ? { reason: e.failureReason, code: e.errorCode } : { other: String(e) }),
      );

    it('sends with the status callback, media as MediaUrl, and sends nothing twice for one key', async () => {
      const first = await texts().submit(
        sms('msg_t1', '+13125550100', { mediaUrls: ['https://cdn.example/a.jpg', 'https://cdn.example/b.png'] }),
      );
      expect(first.carrierMessageId).to.match(/^SM[0-9a-f]{32}$/);
      const sent = fake.sent('CreateMessage').at(-1)!.form;
      expect(sent.get('StatusCallback')).to.equal(`${TWILIO_PUBLIC_URL}/integrations/twilio/status`);
      expect(sent.getAll('MediaUrl')).to.deep.equal(['https://cdn.example/a.jpg', 'https://cdn.example/b.png']);
      expect([sent.get('From'), sent.get('To'), sent.get('Body')]).to.deep.equal([from, '+13125550100', 'Hello msg_t1']);
      const creates = fake.sent('CreateMessage').length;
      expect(await texts().submit(sms('msg_t1', '+13125550100'))).to.deep.equal(first);
      expect(fake.sent('CreateMessage')).to.have.length(creates);
    });

    it('refuses with the reason Twilio’s code means, and refuses the same key again without asking Twilio', async () => {
      fake.refuseTo.set('+13125550121', 21610);
      const r = await refusal(texts().submit(sms('msg_t2', '+13125550121')));
      expect(r).to.deep.equal({ reason: 'The recipient has opted out of messages from this number.', code: '21610' });
      const creates = fake.sent('CreateMessage').length;
      expect(await refusal(texts().submit(sms('msg_t2', '+13125550121')))).to.deep.equal(r);
      expect(fake.sent('CreateMessage')).to.have.length(creates);
    });

    it('a text whose answer was lost is found at Twilio when submitted again, not sent twice', async () => {
      fake.fail('CreateMessage', 'lose-answer');
      expect(await refusal(texts().submit(sms('msg_t3', '+13125550130'))))
        .to.have.property('other')
        .that.match(/TwilioUnanswered/);
      const creates = fake.sent('CreateMessage').length;
      const again = await texts().submit(sms('msg_t3', '+13125550130'));
      expect(fake.sent('CreateMessage')).to.have.length(creates);
      expect([...fake.messages.values()].filter((m) => m.body === 'Hello msg_t3').map((m) => m.sid)).to.deep.equal([
        again.carrierMessageId,
      ]);
      // a key whose first try never reached Twilio is sent then, once
      fake.fail('CreateMessage', { status: 503, code: 20503, message: 'Service unavailable' });
      expect(await refusal(texts().submit(sms('msg_t4', '+13125550130')))).to.have.property('other');
      const sid = (await texts().submit(sms('msg_t4', '+13125550130'))).carrierMessageId;
      expect([...fake.messages.values()].filter((m) => m.body === 'Hello msg_t4').map((m) => m.sid)).to.deep.equal([sid]);
    });
  });

  describe('a server killed while Twilio’s purchase answer was outstanding', () => {
    let dataDir: string;
    before(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'twilio-recovery-'));
    });
    after(() => rmSync(dataDir, { recursive: true, force: true }));

    it('finds the number by its key when the service starts again, and never buys it twice', async () => {
      const env = { ...twilioEnv(fake), REACTOR_LEASE_TTL_MS: '1000' };
      const creates = fake.sent('CreateIncomingPhoneNumber').length;
      // the data directory's first life migrates it (the child process then starts quicker)
      await (await startAppOn({ dataDir, reset: true, env })).close();
      // Twilio sells the number and never answers: the kill comes in between
      fake.fail('CreateIncomingPhoneNumber', 'hang');
      // the child prints PUBLIC_URL as its address: give it its own, on a port chosen here
      const port = await freePort();
      const first = await startServerProcess(
        {
          ...process.env,
          ...env,
          PUBLIC_URL: `http://127.0.0.1:${port}`,
          DATA_DIR: dataDir,
          PORT: String(port),
          HOST: '127.0.0.1',
          ADMIN_TOKEN,
          DEV_ACCOUNT: 'false',
          LOG_LEVEL: 'warn',
        },
        () => true,
      );
      first.child.removeAllListeners('exit');
      let key = '';
      let numberId = '';
      try {
        const r = await fetch(`${first.base}/admin/accounts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Killed' }),
        });
        key = ((await r.json()) as { apiKey: string }).apiKey;
        void fetch(`${first.base}/v1/numbers`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ areaCode: '206' }),
        }).catch(() => undefined);
        const sold = await eventually(
          async () => [...fake.numbers.values()].find((n) => n.phone_number.startsWith('+1206')),
          'Twilio sold the number',
          60_000,
        );
        numberId = sold.friendly_name.replace('agent-platform ', '').split(':')[0]!;
      } finally {
        first.child.kill('SIGKILL');
        await new Promise((r) => first.child.on('exit', r));
      }

      const second = await startAppOn({ dataDir, reset: false, env });
      try {
        const n = await eventually(
          async () => {
            const r = await second.call('GET', `/v1/numbers/${numberId}`, { key });
            return r.status === 200 && r.body.status === 'active' ? r.body : undefined;
          },
          'the number active after the restart',
          60_000,
        );
        const sold = [...fake.numbers.values()].filter((x) => x.friendly_name === purchaseName(`${numberId}:1`));
        expect(sold.map((x) => x.phone_number)).to.deep.equal([n.phoneNumber]);
        expect(sold[0]!.sms_url).to.equal(`${TWILIO_PUBLIC_URL}/integrations/twilio/messages`);
        expect(fake.sent('CreateIncomingPhoneNumber')).to.have.length(creates + 1);
      } finally {
        await second.close();
      }
    });
  });

  describe('configuration', () => {
    const base = { DATA_DIR: 'memory://', PROVIDER_MODE: 'live', CARRIER: 'twilio', PUBLIC_URL: 'https://p.example' };
    const sid = `AC${'a'.repeat(32)}`;
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return 'started';
      } catch (err) {
        return (err as Error).message;
      }
    };

    it('refuses a live start that lacks what Twilio needs, naming each variable', () => {
      expect(refusal(base)).to.include('CARRIER=twilio needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN');
      expect(refusal({ ...base, TWILIO_ACCOUNT_SID: sid })).to.match(/needs TWILIO_AUTH_TOKEN$/);
      const { PUBLIC_URL: _, ...noUrl } = base;
      expect(refusal({ ...noUrl, TWILIO_ACCOUNT_SID: sid, TWILIO_AUTH_TOKEN: 'x'.repeat(32) })).to.match(/needs PUBLIC_URL$/);
      expect(
        refusal({ ...base, TWILIO_ACCOUNT_SID: sid, TWILIO_AUTH_TOKEN: 'x'.repeat(32), TWILIO_API_KEY_SID: `SK${'b'.repeat(32)}` }),
      ).to.match(/needs TWILIO_API_KEY_SECRET$/);
      expect(refusal({ ...base, PROVIDER_MODE: 'sandbox', TWILIO_ACCOUNT_SID: sid, TWILIO_AUTH_TOKEN: 'x'.repeat(32) })).to.include(
        'needs PROVIDER_MODE=live',
      );
      expect(refusal({ ...base, TWILIO_ACCOUNT_SID: 'AC123', TWILIO_AUTH_TOKEN: 'x'.repeat(32) })).to.include('TWILIO_ACCOUNT_SID');
      expect(refusal({ ...base, TWILIO_ACCOUNT_SID: sid, TWILIO_AUTH_TOKEN: 'x'.repeat(32) })).to.equal('started');
    });
  });
});

/** A TCP port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

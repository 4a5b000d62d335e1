import { expect } from 'chai';
import { DomainError } from '../../domain/shared/errors.js';
import { TwilioApi } from '../../infrastructure/carriers/twilio/twilio-api.js';
import { purchaseName, TwilioNumbers } from '../../infrastructure/carriers/twilio/twilio-numbers.js';
import { createLogger } from '../../infrastructure/logger.js';
import { FAKE_ACCOUNT_SID, FAKE_AUTH_TOKEN, FAKE_MESSAGING_SERVICE_SID, FAKE_TRUNK_SID, type FakeTwilio } from '../support/fake-twilio.js';
import { TWILIO_PUBLIC_URL, useFakeTwilio } from '../support/twilio.js';

const SMS_URL = `${TWILIO_PUBLIC_URL}/integrations/twilio/messages`;

const codeOf = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof DomainError ? e.code : `${(e as Error).name}: ${(e as Error).message}`),
  );

/**
 * The Twilio carrier's numbers and lookups (docs/carriers.md#numbers) against a fake Twilio whose every request is
 * checked by mocks of Twilio's published API documents (docs/testing.md#the-twilio-carrier).
 */
describe('Twilio carrier: numbers and lookups (CarrierPort), checked against Twilio’s API documents', function () {
  this.timeout(60_000);
  const twilio = useFakeTwilio();
  let fake: FakeTwilio;
  const api = (o: { username?: string; password?: string; timeoutMs?: number } = {}) =>
    new TwilioApi({
      accountSid: FAKE_ACCOUNT_SID,
      username: o.username ?? FAKE_ACCOUNT_SID,
      password: o.password ?? FAKE_AUTH_TOKEN,
      baseUrls: { api: fake.url, lookups: fake.url, trunking: fake.url, messaging: fake.url },
      timeoutMs: o.timeoutMs ?? 5000,
    });
  const numbers = (o: { trunk?: string | null; service?: string | null } = {}) =>
    new TwilioNumbers(
      api(),
      {
        smsUrl: SMS_URL,
        sipTrunkSid: o.trunk === undefined ? FAKE_TRUNK_SID : o.trunk,
        messagingServiceSid: o.service === undefined ? FAKE_MESSAGING_SERVICE_SID : o.service,
      },
      createLogger('silent'),
    );
  before(() => {
    fake = twilio();
  });

  it('searches local numbers of an area code that take texts and calls', async () => {
    const found = await numbers().searchAvailable({ country: 'US', areaCode: '415', limit: 3 });
    expect(found).to.have.length(3);
    for (const n of found) expect(n).to.deep.include({ areaCode: '415', country: 'US' });
    const q = fake.sent('ListAvailablePhoneNumberLocal').at(-1)!.query;
    expect(Object.fromEntries(q)).to.deep.equal({ AreaCode: '415', SmsEnabled: 'true', VoiceEnabled: 'true', PageSize: '3' });
    expect(await numbers().searchAvailable({ country: 'US', areaCode: '907', limit: 5 })).to.deep.equal([]);
  });

  it('buys a number under its key, finds it again by the key, and buys nothing twice for one key', async () => {
    const c = numbers();
    const [first] = await c.searchAvailable({ country: 'US', areaCode: '212', limit: 1 });
    const bought = await c.purchase({ phoneNumber: first!.phoneNumber, idempotencyKey: 'num_a:1', accountId: 'acc_1' });
    expect(bought.phoneNumber).to.equal(first!.phoneNumber);
    expect(bought.carrierRef).to.match(/^PN[0-9a-f]{32}$/);
    expect(fake.numbers.get(bought.carrierRef)!.friendly_name).to.equal(purchaseName('num_a:1'));
    expect(await c.findPurchase('num_a:1')).to.deep.equal(bought);
    expect(await c.findPurchase('num_a:2')).to.equal(null);
    // buying again with the key (whatever number is asked for) answers the number it holds
    const [other] = await c.searchAvailable({ country: 'US', areaCode: '212', limit: 1 });
    expect(await c.purchase({ phoneNumber: other!.phoneNumber, idempotencyKey: 'num_a:1', accountId: 'acc_1' })).to.deep.equal(bought);
    expect([...fake.numbers.values()].filter((n) => n.friendly_name === purchaseName('num_a:1'))).to.have.length(1);
  });

  it('a purchase whose answer was lost is found by its key, never bought twice', async () => {
    const c = numbers();
    const [n] = await c.searchAvailable({ country: 'US', areaCode: '303', limit: 1 });
    const creates = fake.sent('CreateIncomingPhoneNumber').length;
    fake.fail('CreateIncomingPhoneNumber', 'lose-answer');
    const bought = await c.purchase({ phoneNumber: n!.phoneNumber, idempotencyKey: 'num_lost:1', accountId: 'acc_1' });
    expect(bought.phoneNumber).to.equal(n!.phoneNumber);
    expect(await c.findPurchase('num_lost:1')).to.deep.equal(bought);
    // and the number process's next try (after a crash, say) finds it first
    expect(await c.purchase({ phoneNumber: n!.phoneNumber, idempotencyKey: 'num_lost:1', accountId: 'acc_1' })).to.deep.equal(bought);
    expect(fake.sent('CreateIncomingPhoneNumber')).to.have.length(creates + 1);
    // a success whose body has no number in it says no more than no answer: found the same way
    const [m] = await c.searchAvailable({ country: 'US', areaCode: '415', limit: 1 });
    fake.fail('CreateIncomingPhoneNumber', 'garble');
    const garbled = await c.purchase({ phoneNumber: m!.phoneNumber, idempotencyKey: 'num_garbled:1', accountId: 'acc_1' });
    expect(garbled).to.deep.equal({ phoneNumber: m!.phoneNumber, carrierRef: fake.byPhone(m!.phoneNumber)!.sid });
    expect(fake.sent('CreateIncomingPhoneNumber')).to.have.length(creates + 2);
  });

  it('takes a number Twilio refuses as taken (21422) when it is the key’s own: the same purchase sent again', async () => {
    const c = numbers();
    const [n] = await c.searchAvailable({ country: 'US', areaCode: '385', limit: 1 });
    const bought = await c.purchase({ phoneNumber: n!.phoneNumber, idempotencyKey: 'num_again:1', accountId: 'acc_1' });
    // the look for the key does not see it yet, and Twilio refuses the number as taken
    fake.fail('ListIncomingPhoneNumber', 'stale');
    expect(await c.purchase({ phoneNumber: n!.phoneNumber, idempotencyKey: 'num_again:1', accountId: 'acc_1' })).to.deep.equal(bought);
  });

  it('fails a purchase Twilio did not answer and does not list, and releases it once it shows', async () => {
    const c = numbers();
    const [n] = await c.searchAvailable({ country: 'US', areaCode: '801', limit: 1 });
    fake.fail('CreateIncomingPhoneNumber', 'lose-answer');
    fake.fail('ListIncomingPhoneNumber', 'stale', 2);
    expect(await codeOf(c.purchase({ phoneNumber: n!.phoneNumber, idempotencyKey: 'num_late:1', accountId: 'acc_1' }))).to.equal(
      'SMS_PROVIDER_ERROR',
    );
    // the number process's undo releases whatever the key holds by then
    await c.release({ idempotencyKey: 'num_late:1' });
    expect(fake.byPhone(n!.phoneNumber)).to.equal(undefined);
  });

  it('keeps one number when two purchases of one key raced, releasing the other', async () => {
    const c = numbers();
    const [a, b] = await c.searchAvailable({ country: 'US', areaCode: '602', limit: 2 });
    // the first purchase's answer is lost after it took effect, and neither its own look for the key nor the
    // second purchase's sees it yet
    fake.fail('CreateIncomingPhoneNumber', 'lose-answer');
    fake.fail('ListIncomingPhoneNumber', 'stale', 3);
    expect(await codeOf(c.purchase({ phoneNumber: a!.phoneNumber, idempotencyKey: 'num_race:1', accountId: 'acc_1' }))).to.equal(
      'SMS_PROVIDER_ERROR',
    );
    const kept = await c.purchase({ phoneNumber: b!.phoneNumber, idempotencyKey: 'num_race:1', accountId: 'acc_1' });
    expect(kept.phoneNumber).to.equal(b!.phoneNumber);
    const held = [...fake.numbers.values()].filter((n) => n.friendly_name === purchaseName('num_race:1'));
    expect(held.map((n) => n.sid)).to.deep.equal([kept.carrierRef]);
  });

  it('answers NUMBER_UNAVAILABLE for a number someone else bought (21422), SMS_PROVIDER_ERROR for other refusals', async () => {
    const c = numbers();
    const [n] = await c.searchAvailable({ country: 'US', areaCode: '718', limit: 1 });
    await c.purchase({ phoneNumber: n!.phoneNumber, idempotencyKey: 'num_b:1', accountId: 'acc_1' });
    expect(await codeOf(c.purchase({ phoneNumber: n!.phoneNumber, idempotencyKey: 'num_c:1', accountId: 'acc_1' }))).to.equal(
      'NUMBER_UNAVAILABLE',
    );
    fake.fail('ListAvailablePhoneNumberLocal', { status: 401, code: 20003, message: 'Authenticate' });
    expect(await codeOf(c.searchAvailable({ country: 'US', areaCode: '718', limit: 1 }))).to.equal('SMS_PROVIDER_ERROR');
    // no answer fails the step too: the number process never waits on Twilio for ever
    fake.fail('ListAvailablePhoneNumberLocal', { status: 503, code: 20500, message: 'Service Unavailable' });
    expect(await codeOf(c.searchAvailable({ country: 'US', areaCode: '718', limit: 1 }))).to.equal('SMS_PROVIDER_ERROR');
    fake.fail('UpdateIncomingPhoneNumber', 'lose-answer');
    expect(await codeOf(c.configureRouting({ idempotencyKey: 'num_b:1', phoneNumber: n!.phoneNumber }))).to.equal('SMS_PROVIDER_ERROR');
  });

  it('routes texts to the platform, joins the Messaging Service and the SIP trunk once; without them, nothing else changes', async () => {
    const c = numbers();
    const [n, m] = await c.searchAvailable({ country: 'CA', areaCode: '416', limit: 2 });
    const bought = await c.purchase({ phoneNumber: n!.phoneNumber, idempotencyKey: 'num_r:1', accountId: 'acc_1' });
    await c.configureRouting({ idempotencyKey: 'num_r:1', phoneNumber: n!.phoneNumber });
    await c.configureRouting({ idempotencyKey: 'num_r:1', phoneNumber: n!.phoneNumber });
    const routed = fake.numbers.get(bought.carrierRef)!;
    expect(routed).to.deep.include({ sms_url: SMS_URL, sms_method: 'POST', sms_fallback_url: SMS_URL, trunk_sid: FAKE_TRUNK_SID });
    expect(fake.sent('trunking.CreatePhoneNumber').filter((r) => r.form.get('PhoneNumberSid') === bought.carrierRef)).to.have.length(1);
    expect(fake.inService.has(bought.carrierRef)).to.equal(true);
    expect(fake.sent('messaging.CreatePhoneNumber').filter((r) => r.form.get('PhoneNumberSid') === bought.carrierRef)).to.have.length(1);

    const plain = numbers({ trunk: null, service: null });
    const other = await plain.purchase({ phoneNumber: m!.phoneNumber, idempotencyKey: 'num_r:2', accountId: 'acc_1' });
    await plain.configureRouting({ idempotencyKey: 'num_r:2', phoneNumber: m!.phoneNumber });
    expect(fake.numbers.get(other.carrierRef)).to.deep.include({ sms_url: SMS_URL, trunk_sid: null });
    expect(fake.inService.has(other.carrierRef)).to.equal(false);
  });

  it('fails the trunk step as TELEPHONY_PROVIDER_ERROR, and a number not held under the key as SMS_PROVIDER_ERROR', async () => {
    const c = numbers({ trunk: `TK${'1'.repeat(32)}` });
    const [n] = await c.searchAvailable({ country: 'US', areaCode: '512', limit: 1 });
    await c.purchase({ phoneNumber: n!.phoneNumber, idempotencyKey: 'num_t:1', accountId: 'acc_1' });
    expect(await codeOf(c.configureRouting({ idempotencyKey: 'num_t:1', phoneNumber: n!.phoneNumber }))).to.equal(
      'TELEPHONY_PROVIDER_ERROR',
    );
    expect(await codeOf(c.configureRouting({ idempotencyKey: 'num_none:1', phoneNumber: n!.phoneNumber }))).to.equal('SMS_PROVIDER_ERROR');
  });

  it('releases every number its key holds, and releasing again is a no-op', async () => {
    const c = numbers();
    const [n] = await c.searchAvailable({ country: 'US', areaCode: '617', limit: 1 });
    const bought = await c.purchase({ phoneNumber: n!.phoneNumber, idempotencyKey: 'num_d:1', accountId: 'acc_1' });
    await c.release({ idempotencyKey: 'num_d:1' });
    expect(fake.numbers.has(bought.carrierRef)).to.equal(false);
    await c.release({ idempotencyKey: 'num_d:1' });
    expect(await c.findPurchase('num_d:1')).to.equal(null);
    // back on sale
    expect((await c.searchAvailable({ country: 'US', areaCode: '617', limit: 20 })).map((x) => x.phoneNumber)).to.include(n!.phoneNumber);
  });

  it('maps Lookup v2 line type intelligence to the line types of docs/numbers.md#lookup', async () => {
    const c = numbers();
    const cases: [string, string][] = [
      ['+14155550100', 'mobile'],
      ['+14155550101', 'landline'],
      ['+14155550102', 'voip'],
      ['+14155550103', 'voip'],
      ['+18005550104', 'toll-free'],
      ['+19005550105', 'premium'],
      ['+447700900106', 'unknown'],
      ['+14155550109', 'unknown'],
    ];
    const infos = await Promise.all(cases.map(([n]) => c.lookup(n)));
    expect(infos.map((i) => i.lineType)).to.deep.equal(cases.map(([, t]) => t));
    expect(infos[0]).to.deep.equal({
      phoneNumber: '+14155550100',
      valid: true,
      lineType: 'mobile',
      country: 'US',
      carrierName: 'Fake mobile carrier',
      rcsSupported: false,
    });
    expect(infos[6]!.country).to.equal('GB');
    expect(fake.sent('lookups.FetchPhoneNumber').at(-1)!.query.get('Fields')).to.equal('line_type_intelligence');
    expect(await c.lookup('+1415555010000')).to.deep.equal({
      phoneNumber: '+1415555010000',
      valid: false,
      lineType: 'unknown',
      country: null,
      carrierName: null,
      rcsSupported: false,
    });
    fake.fail('lookups.FetchPhoneNumber', { status: 503, code: 20500, message: 'Service Unavailable' });
    expect(await codeOf(c.lookup('+14155550100'))).to.equal('SMS_PROVIDER_ERROR');
  });

  it('authenticates with an API key instead of the auth token, and never puts a credential in an error', async () => {
    const keySid = `SK${'ab'.repeat(16)}`;
    const keyed = new TwilioNumbers(
      new TwilioApi({
        accountSid: FAKE_ACCOUNT_SID,
        username: keySid,
        password: 'api-key-secret-0123456789',
        baseUrls: { api: fake.url, lookups: fake.url, trunking: fake.url, messaging: fake.url },
        timeoutMs: 5000,
      }),
      { smsUrl: SMS_URL, sipTrunkSid: null, messagingServiceSid: null },
      createLogger('silent'),
    );
    expect(await keyed.searchAvailable({ country: 'US', areaCode: '305', limit: 1 })).to.have.length(1);
    fake.fail('ListAvailablePhoneNumberLocal', { status: 401, code: 20003, message: 'Authenticate' });
    const err = await keyed.searchAvailable({ country: 'US', areaCode: '305', limit: 1 }).catch((e: Error) => e);
    expect(String((err as Error).message))
      .to.include('20003')
      .and.not.include('api-key-secret')
      .and.not.include(FAKE_AUTH_TOKEN);
  });
});

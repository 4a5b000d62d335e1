import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js';
import { SmsSubmissionError } from '../../application/messaging/sms-carrier.port.js';
import { failureReasonOf } from '../../domain/message/failure-reasons.js';
import { twilioFailure, twilioReason } from '../../infrastructure/carriers/twilio/error-codes.js';
import { TWILIO } from '../../infrastructure/carriers/twilio/tokens.js';
import { purchaseName } from '../../infrastructure/carriers/twilio/twilio-numbers.js';
import { loadConfig } from '../../infrastructure/config/config.js';
import { FAKE_TRUNK_SID, type FakeTwilio } from '../support/fake-twilio.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { messageWhen, REGISTRATION } from '../support/messaging.js';
import { account, credit, eventually, startAppOn, usage } from '../support/numbers.js';
import { startServerProcess } from '../support/server-process.js';
import { TWILIO_PUBLIC_URL, twilioEnv, useFakeTwilio } from '../support/twilio.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/**
 * Numbers and lookups on Twilio through the public API (docs/carriers.md): a live start with CARRIER=twilio whose
 * Twilio is the fake of test/support/fake-twilio.ts, every request of which passes the contract mocks of Twilio's
 * published documents.
 */
describe('Twilio carrier: numbers, lookups and texts', function () {
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

    it('buys a number at Twilio, routes its texts to the platform, adds it to the Messaging Service and its calls to the SIP trunk, and charges the month here', async () => {
      const acc = await account(app);
      const asked = fake.requests.length;
      const r = await post(acc.apiKey, { areaCode: '415' });
      expect(r.status).to.equal(200);
      // what one number costs at Twilio (docs/testing.md#the-twilio-carrier): the key looked for (by the number
      // process, then by the purchase, idempotent on its own), search, buy, a raced second purchase looked for, the
      // key's number found to route it, then its Messaging Service (unless there) and its trunk
      expect(fake.requests.slice(asked).map((q) => q.operation)).to.deep.equal([
        'ListIncomingPhoneNumber',
        'ListAvailablePhoneNumberLocal',
        'ListIncomingPhoneNumber',
        'CreateIncomingPhoneNumber',
        'ListIncomingPhoneNumber',
        'ListIncomingPhoneNumber',
        'UpdateIncomingPhoneNumber',
        'messaging.FetchPhoneNumber',
        'messaging.CreatePhoneNumber',
        'trunking.CreatePhoneNumber',
      ]);
      expect(r.body).to.deep.include({ status: 'active', country: 'US', areaCode: '415' });
      const bought = fake.byPhone(r.body.phoneNumber)!;
      expect(bought).to.deep.include({
        friendly_name: purchaseName(keyOf(r.body.id)),
        sms_url: `${TWILIO_PUBLIC_URL}/integrations/twilio/messages`,
        sms_method: 'POST',
        sms_fallback_url: `${TWILIO_PUBLIC_URL}/integrations/twilio/messages`,
        trunk_sid: FAKE_TRUNK_SID,
      });
      expect(fake.inService.has(bought.sid)).to.equal(true);
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
      const asked = fake.sent('lookups.FetchPhoneNumber').length;
      const again = await app.call('GET', q, { key: acc.apiKey });
      expect(again.body.data.every((d: { cached: boolean }) => d.cached)).to.equal(true);
      expect(again.body.chargedMicros).to.equal(0);
      expect(fake.sent('lookups.FetchPhoneNumber')).to.have.length(asked);
      expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(5_000_000 - 27_000);
    });

    it('answers 502 and charges nothing when Twilio does not answer a lookup', async () => {
      const acc = await account(app);
      fake.fail('lookups.FetchPhoneNumber', { status: 500, code: 20500, message: 'Internal' });
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

    it('a text whose answer was lost or unreadable is found at Twilio when submitted again, not sent twice', async () => {
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
      // a success whose body lacks the message's SID says no more than no answer: found the same way
      fake.fail('CreateMessage', 'garble');
      expect(await refusal(texts().submit(sms('msg_t5', '+13125550130'))))
        .to.have.property('other')
        .that.match(/cannot read/);
      const garbled = await texts().submit(sms('msg_t5', '+13125550130'));
      expect([...fake.messages.values()].filter((m) => m.body === 'Hello msg_t5').map((m) => m.sid)).to.deep.equal([
        garbled.carrierMessageId,
      ]);
      // a key whose first try never reached Twilio is sent then, once
      fake.fail('CreateMessage', { status: 503, code: 20503, message: 'Service unavailable' });
      expect(await refusal(texts().submit(sms('msg_t4', '+13125550130')))).to.have.property('other');
      const sid = (await texts().submit(sms('msg_t4', '+13125550130'))).carrierMessageId;
      expect([...fake.messages.values()].filter((m) => m.body === 'Hello msg_t4').map((m) => m.sid)).to.deep.equal([sid]);
    });
  });

  describe('texts through the API, and Twilio’s callbacks', () => {
    let app: TestApp;
    let rx: Receiver;
    let line: Line;
    let seq = 0;
    /** a recipient of its own for each test (Canadian mobiles, so that no 10DLC registration is needed) */
    const recipient = () => `+1416555${String(2000 + ++seq).padStart(4, '0')}`;
    before(async () => {
      app = await startTestApp({
        ...twilioEnv(fake),
        WEBHOOK_ALLOW_PRIVATE: 'true',
        MESSAGE_SEND_BURST: '1000',
        MESSAGE_SEND_RATE_PER_SECOND: '1000',
      });
      fake.deliverTo(app.url);
      rx = await startReceiver();
      line = await twilioLine(app, { country: 'CA' });
      const w = await app.call('POST', '/v1/webhooks', { key: line.key, body: { url: `${rx.url}/hook` } });
      expect(w.status, JSON.stringify(w.body)).to.equal(200);
    });
    after(async () => {
      await rx?.close();
      await app?.close();
    });

    const send = (to: string, body: string, l = line) =>
      app.call('POST', '/v1/messages', { key: l.key, body: { agent_id: l.agentId, to_number: to, body } });
    /** the message Twilio was given for `to` (the send goes through the delivery pipeline, moments after 201) */
    const atTwilio = (to: string, n = 1) =>
      eventually(async () => {
        const found = [...fake.messages.values()].filter((m) => m.to === to);
        return found.length >= n ? found : undefined;
      }, `Twilio took ${n} message(s) to ${to}`);
    const message = (l: Line, r: { body: { conversation_id: string; id: string } }, done: (m: any) => boolean, what: string) =>
      messageWhen(app, l.key, r.body.conversation_id, r.body.id, done, what);
    const events = (event: string) => rx.received.map((r) => JSON.parse(r.body)).filter((b) => b.event === event);
    const conversationWith = async (participant: string, l = line) => {
      const r = await app.call('GET', '/v1/conversations?limit=100', { key: l.key });
      return r.body.data.find((c: { participant: string }) => c.participant === participant) as
        | { id: string; messageCount: number }
        | undefined;
    };

    /**
     * A callback made here as Twilio would make it: form-encoded, signed over the public URL; or with `signature`
     * (null: none).
     */
    const callback = async (path: string, form: Record<string, string>, signature?: string | null) => {
      const sig = signature === undefined ? getExpectedTwilioSignature(fake.authToken, `${TWILIO_PUBLIC_URL}${path}`, form) : signature;
      const r = await fetch(`${app.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(sig === null ? {} : { 'x-twilio-signature': sig }) },
        body: new URLSearchParams(form).toString(),
      });
      return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
    };

    it('sends through Twilio with the status callback, and moves through its statuses never backwards, whatever their order or repeats', async () => {
      const to = recipient();
      const asked = fake.requests.length;
      const r = await send(to, 'Your table is ready.');
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      const [sent] = await atTwilio(to);
      // what one text costs at Twilio (docs/testing.md#the-twilio-carrier): one request
      expect(fake.requests.slice(asked).map((q) => q.operation)).to.deep.equal(['CreateMessage']);
      expect(sent!.status_callback).to.equal(`${TWILIO_PUBLIC_URL}/integrations/twilio/status`);
      expect([sent!.from, sent!.body]).to.deep.equal([line.phoneNumber, 'Your table is ready.']);
      await message(line, r, (m) => m.status === 'queued' || m.status === 'sent', 'submitted');
      acked(await fake.status(sent!.sid, 'queued'));
      acked(await fake.status(sent!.sid, 'delivered'));
      const delivered = await message(line, r, (m) => m.status === 'delivered', 'delivered');
      expect(delivered.deliveredAt).to.be.a('string');
      // late and repeated: `sent` after `delivered`, `delivered` twice, `undelivered` after it
      for (const late of ['sent', 'delivered', 'undelivered']) acked(await fake.status(sent!.sid, late, { errorCode: 30003 }));
      const after = await message(line, r, () => true, 'read again');
      expect(after).to.include({ status: 'delivered', failureReason: null });
    });

    it('fails a message with the reason, category and retryability each Twilio error code means; an unknown code is the non-retryable default', async () => {
      const codes = [30001, 30003, 30005, 30006, 30007, 30008, 30010, 30034, 21211, 21408, 21610, 21612, 39999];
      const sends = await Promise.all(
        codes.map(async (code) => {
          const to = recipient();
          const r = await send(to, `code ${code}`);
          expect(r.status).to.equal(201);
          const [m] = await atTwilio(to);
          await message(line, r, (x) => x.status === 'queued' || x.status === 'sent', 'submitted');
          acked(await fake.status(m!.sid, 'sent'));
          acked(await fake.status(m!.sid, code === 30007 ? 'failed' : 'undelivered', { errorCode: code }));
          return { code, r };
        }),
      );
      for (const { code, r } of sends) {
        const failed = await message(line, r, (m) => m.status === 'failed', `failed with ${code}`);
        const expected = twilioFailure(code, { registerUrl: `${TWILIO_PUBLIC_URL}/docs#tag/registration` });
        const reason = failureReasonOf(twilioReason(code));
        expect(failed, String(code)).to.include({
          failureReason: expected.detail,
          errorCode: String(code),
          failureCategory: reason.category,
          retryable: reason.retryable,
        });
      }
      expect(sends.at(-1)!.code).to.equal(39999);
    });

    it('fails a send Twilio refuses at once with the reason of its code', async () => {
      const to = recipient();
      fake.refuseTo.set(to, 21610);
      const r = await send(to, 'hello?');
      expect(r.status).to.equal(201);
      const failed = await message(line, r, (m) => m.status === 'failed', 'refused');
      expect(failed).to.include({
        failureReason: 'The recipient has opted out of messages from this number.',
        errorCode: '21610',
        failureCategory: 'recipient',
        retryable: false,
      });
      expect([...fake.messages.values()].filter((m) => m.to === to)).to.deep.equal([]);
    });

    it('takes an inbound text with media as the sandbox does (conversation, agent.message), once however often Twilio sends it', async () => {
      const from = recipient();
      const text = fake.inbound({
        from,
        to: line.phoneNumber,
        body: 'Here is the photo',
        mediaUrls: ['https://api.twilio.com/2010-04-01/Accounts/AC/Messages/MM/Media/ME1'],
      });
      acked(await text.send());
      const evt = await eventually(async () => events('agent.message').find((e) => e.data.from === from), 'agent.message');
      expect(evt).to.include({ channel: 'mms', agentId: line.agentId });
      expect(evt.data).to.include({ to: line.phoneNumber, message: 'Here is the photo', direction: 'inbound' });
      expect(evt.data.mediaUrls).to.deep.equal(['https://api.twilio.com/2010-04-01/Accounts/AC/Messages/MM/Media/ME1']);
      // the same callback again (Twilio's fallback, a replay): nothing new
      acked(await text.send());
      const conv = await eventually(() => conversationWith(from), 'the conversation');
      const listed = (await app.call('GET', `/v1/conversations/${conv.id}/messages`, { key: line.key })).body.data;
      expect(listed.map((m: { body: string }) => m.body)).to.deep.equal(['Here is the photo']);
      expect(events('agent.message').filter((e) => e.data.from === from)).to.have.length(1);
      // a plain text: the sms channel, no media
      acked(await fake.inbound({ from, to: line.phoneNumber, body: 'And thanks!' }).send());
      const sms = await eventually(async () => events('agent.message').find((e) => e.data.message === 'And thanks!'), 'the text');
      expect(sms).to.include({ channel: 'sms', agentId: line.agentId });
      expect(sms.data).to.include({ from, to: line.phoneNumber, direction: 'inbound' });
      expect(sms.data.mediaUrls).to.deep.equal([]);
    });

    it('honours STOP: the confirmation goes out through Twilio, and later sends fail without reaching it', async () => {
      const who = recipient();
      acked(await fake.inbound({ from: who, to: line.phoneNumber, body: 'STOP' }).send());
      const [confirmation] = await atTwilio(who);
      expect(confirmation!.body).to.include('START');
      const r = await send(who, 'one more thing');
      expect(r.status).to.equal(201);
      const failed = await message(line, r, (m) => m.status === 'failed', 'opted out');
      expect(failed.failureReason).to.equal('The recipient has opted out of messages from this number.');
      expect([...fake.messages.values()].filter((m) => m.to === who)).to.have.length(1);
    });

    it('refuses a callback that Twilio did not sign, signed over another URL, changed on the way or for another account with 403, and records nothing', async () => {
      const from = recipient();
      const hi = { MessageSid: `SM${'1'.repeat(32)}`, AccountSid: fake.accountSid, From: from, To: line.phoneNumber, Body: 'hi' };
      expect((await callback('/integrations/twilio/messages', hi, null)).status).to.equal(403);
      expect(
        (await fake.inbound({ from, to: line.phoneNumber, body: 'forged' }, { signature: 'bm90IGEgc2lnbmF0dXJl' }).send()).status,
      ).to.equal(403);
      // signed with the right token over another address: not this platform's public URL
      const elsewhere = getExpectedTwilioSignature(fake.authToken, 'https://attacker.example/integrations/twilio/messages', {
        MessageSid: `SM${'2'.repeat(32)}`,
        AccountSid: fake.accountSid,
        From: from,
        To: line.phoneNumber,
        Body: 'moved',
      });
      expect(
        (
          await fake
            .inbound({ from, to: line.phoneNumber, body: 'moved', messageSid: `SM${'2'.repeat(32)}` }, { signature: elsewhere })
            .send()
        ).status,
      ).to.equal(403);
      // signed, but a parameter changed on the way; or signed for another Twilio account
      const params = { MessageSid: `SM${'3'.repeat(32)}`, AccountSid: fake.accountSid, From: from, To: line.phoneNumber, Body: 'original' };
      const url = `${TWILIO_PUBLIC_URL}/integrations/twilio/messages`;
      const changed = { ...params, Body: 'changed' };
      expect(
        (await callback('/integrations/twilio/messages', changed, getExpectedTwilioSignature(fake.authToken, url, params))).status,
      ).to.equal(403);
      expect((await callback('/integrations/twilio/messages', { ...params, AccountSid: `AC${'9'.repeat(32)}` })).status).to.equal(403);
      // a status callback nobody signed changes nothing either
      const to = recipient();
      const r = await send(to, 'status check');
      const [m] = await atTwilio(to);
      await message(line, r, (x) => x.status === 'queued' || x.status === 'sent', 'submitted');
      expect((await fake.status(m!.sid, 'failed', { errorCode: 30005, signature: 'x' })).status).to.equal(403);
      // then the genuine callbacks: once they show, the forged ones before them would have shown too
      acked(await fake.status(m!.sid, 'delivered'));
      expect((await message(line, r, (x) => x.status !== 'queued' && x.status !== 'sent', 'moved')).status).to.equal('delivered');
      acked(await fake.inbound({ from, to: line.phoneNumber, body: 'genuine' }).send());
      const conv = await eventually(() => conversationWith(from), 'the genuine text');
      // the conversation's row can be read before its message's: wait for the message, then check it is the only one
      const listed = await eventually(async () => {
        const data = (await app.call('GET', `/v1/conversations/${conv.id}/messages`, { key: line.key })).body.data;
        return data.length > 0 ? data : undefined;
      }, 'the genuine text listed');
      expect(listed.map((x: { body: string }) => x.body)).to.deep.equal(['genuine']);
    });

    it('ignores the status of a message this platform did not send and a text to a number that is not its own, and refuses oversized callbacks with 413 before reading them', async () => {
      // signed by Twilio, for a message of the account sent elsewhere (the console, another application)
      const status = {
        AccountSid: fake.accountSid,
        MessageSid: `SM${'7'.repeat(32)}`,
        MessageStatus: 'delivered',
        From: line.phoneNumber,
        To: recipient(),
      };
      acked(await callback('/integrations/twilio/status', status));
      // a text to a number that is not the platform's (released here, or another application's): dropped, logged
      const stranger = recipient();
      const text = { AccountSid: fake.accountSid, MessageSid: `SM${'6'.repeat(32)}`, From: stranger, To: '+14165559999', Body: 'hi' };
      acked(await callback('/integrations/twilio/messages', text));
      // a body larger than any of Twilio's, or with more fields: 413 in the error shape, nothing read or recorded
      const from = recipient();
      const huge = { ...text, MessageSid: `SM${'8'.repeat(32)}`, From: from, To: line.phoneNumber, Body: 'x'.repeat(70_000) };
      const tooLarge = await callback('/integrations/twilio/messages', huge);
      expect(tooLarge.status).to.equal(413);
      expect(JSON.parse(tooLarge.text).error.code).to.equal('VALIDATION_ERROR');
      const many: Record<string, string> = { ...huge, Body: 'many fields' };
      for (let i = 0; i < 300; i++) many[`X${i}`] = '1';
      expect((await callback('/integrations/twilio/messages', many)).status).to.equal(413);
      acked(await fake.inbound({ from, to: line.phoneNumber, body: 'small' }).send());
      const conv = await eventually(() => conversationWith(from), 'the small text');
      // the conversation's row can be read before its message's: wait for the message, then check it is the only one
      const listed = await eventually(async () => {
        const data = (await app.call('GET', `/v1/conversations/${conv.id}/messages`, { key: line.key })).body.data;
        return data.length > 0 ? data : undefined;
      }, 'the small text listed');
      expect(listed.map((x: { body: string }) => x.body)).to.deep.equal(['small']);
      expect(await conversationWith(stranger)).to.equal(undefined);
    });

    it('refuses US texts of an account whose 10DLC registration is not approved, until the operator records the approval', async () => {
      const us = await twilioLine(app, { country: 'US' });
      const to = '+13125550142';
      const first = await send(to, 'before registration', us);
      const unregistered = await message(us, first, (m) => m.status === 'failed', 'unregistered');
      expect(unregistered.failureReason).to.match(/^This number is not registered for US A2P 10DLC messaging/);
      expect([...fake.messages.values()].filter((m) => m.to === to)).to.deep.equal([]);
      const reg = await app.call('POST', '/v1/register', { key: us.key, body: REGISTRATION });
      expect(reg.body.campaign_status).to.equal('pending');
      const decided = await app.call('POST', `/admin/registrations/${us.accountId}/approve`, { key: ADMIN_TOKEN });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
      expect(decided.body.campaign_status).to.equal('approved');
      expect((await app.call('GET', '/v1/register/status', { key: us.key })).body.campaign_status).to.equal('approved');
      const second = await send(to, 'after registration', us);
      expect(second.status).to.equal(201);
      await atTwilio(to);
      const none = await app.call('POST', '/admin/registrations/acc_nobody/approve', { key: ADMIN_TOKEN });
      expect(none.status).to.equal(404);
      expect((await app.call('POST', `/admin/registrations/${us.accountId}/approve`, { key: us.key })).status).to.equal(403);
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

/** Twilio's callback was taken: 200 with an empty TwiML document, which has Twilio send nothing back. */
function acked(r: { status: number; type: string | null; text: string }): void {
  expect(r.status, r.text).to.equal(200);
  expect(r.type).to.match(/^text\/xml\b/);
  expect(r.text.replace(/^<\?xml[^>]*\?>/, '')).to.equal('<Response/>');
}

/** A TCP port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

type Line = { accountId: string; key: string; agentId: string; numberId: string; phoneNumber: string };

/** An account with credit, an agent, and a Twilio number attached to it. */
async function twilioLine(app: TestApp, o: { country: 'US' | 'CA' }): Promise<Line> {
  const { accountId, apiKey: key } = await app.newAccount('Twilio texts');
  await credit(app, accountId, 50_000_000);
  const agent = await app.call('POST', '/v1/agents', { key, body: { name: 'Texter' } });
  const n = await app.call('POST', '/v1/numbers', { key, body: { country: o.country, agentId: agent.body.id } });
  if (n.status !== 200) throw new Error(`number: ${n.status} ${JSON.stringify(n.body)}`);
  return { accountId, key, agentId: agent.body.id, numberId: n.body.id, phoneNumber: n.body.phoneNumber };
}

import { expect } from 'chai';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { analyticsMessagesProjector } from '../../projections/analytics/analytics.projectors.js';
import { chatappProjector } from '../../projections/chatapp/chatapp.projector.js';
import { messagingProjector } from '../../projections/messaging/messaging.projector.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import {
  advanceClock,
  approvedTemplate,
  bind,
  COFFEE,
  chatInbound,
  connect,
  FAST_CHATAPP_ENV,
  TRAVEL,
  UNPAID,
} from '../support/chatapp.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { FAST_MESSAGING_ENV, messageWhen, messagingLine } from '../support/messaging.js';
import { eventually } from '../support/numbers.js';
import { projectorsCaughtUp } from '../support/projections.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/**
 * The chat-app channel over HTTP against the sandbox platform (docs/chatapp.md): connections, numbers, templates,
 * sends under the 24-hour window, what the platform reports, and the platform's error codes.
 */
describe('chat-app channel: connections, numbers, templates, the window and sends', function () {
  this.timeout(90_000);
  let app: TestApp;
  let rx: Receiver;
  let key: string;
  let agentId: string;
  let accountId: string;
  let connectionId: string;
  let line: { id: string; numberId: string; phoneNumber: string };
  before(async () => {
    app = await startTestApp({ ...FAST_MESSAGING_ENV, ...FAST_CHATAPP_ENV });
    rx = await startReceiver();
    const acc = await app.newAccount('Chat account');
    key = acc.apiKey;
    accountId = acc.accountId;
    agentId = (await app.call('POST', '/v1/agents', { key, body: { name: 'Concierge' } })).body.id;
    const w = await app.call('POST', '/v1/webhooks', { key, body: { url: rx.url, contextLimit: 5 } });
    expect(w.status, JSON.stringify(w.body)).to.equal(200);
  });
  after(async () => {
    await rx.close();
    await app.close();
  });

  const events = (event: string) => rx.received.map((r) => JSON.parse(r.body)).filter((b) => b.event === event);
  const send = (body: Record<string, unknown>, k = key) =>
    app.call('POST', '/v1/messages', { key: k, body: { agent_id: agentId, ...body } });
  let seq = 0;
  /** a person who writes on the chat app: fictional UK mobiles, none of them magic */
  const person = () => `+4477009008${String(10 + seq++).padStart(2, '0')}`;

  describe('connections', () => {
    it('connects a business account: verified by the platform, listed, the token neither returned nor stored plain', async () => {
      const token = 'EAAG-secret-token-of-the-coffee-business';
      const r = await app.call('POST', '/integrations/chatapp/connections', {
        key,
        body: { business_account_id: COFFEE.businessAccountId, access_token: token },
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.include({ businessAccountId: COFFEE.businessAccountId, status: 'active', businessName: 'Sandbox Coffee Co.' });
      expect(r.body.id).to.match(/^chc_/);
      expect(r.body).to.have.property('createdAt');
      connectionId = r.body.id;
      const list = await app.call('GET', '/integrations/chatapp/connections', { key });
      expect(list.body).to.deep.include({ total: 1, hasMore: false });
      expect(list.body.data[0].id).to.equal(connectionId);
      const one = await app.call('GET', `/integrations/chatapp/connections/${connectionId}`, { key });
      expect(one.status).to.equal(200);
      for (const body of [r.body, list.body, one.body]) expect(JSON.stringify(body)).not.to.contain(token);
      const stored = await app.rt.store.readStream(`chatapp_connection-${connectionId}`);
      const raw = JSON.stringify(stored.map((e) => e.data));
      expect(raw).not.to.contain(token);
      expect(raw).to.contain('enc:v1:');
    });

    it('shows a token the platform refuses (190) and an unknown business account (100) as a failed connection', async () => {
      const bad = await app.call('POST', '/integrations/chatapp/connections', {
        key,
        body: { business_account_id: TRAVEL.businessAccountId, access_token: 'invalid-expired-token' },
      });
      expect(bad.status, JSON.stringify(bad.body)).to.equal(200);
      expect(bad.body).to.include({ status: 'failed', businessAccountId: TRAVEL.businessAccountId });
      expect(bad.body.failureReason).to.contain('Chat platform error 190');
      const unknown = await app.call('POST', '/integrations/chatapp/connections', {
        key,
        body: { business_account_id: '299999999999999', access_token: 'whatever-token' },
      });
      expect(unknown.body.status).to.equal('failed');
      expect(unknown.body.failureReason).to.contain('Chat platform error 100');
      const list = await app.call('GET', '/integrations/chatapp/connections', { key });
      expect(list.body.data.map((c: { status: string }) => c.status).sort()).to.deep.equal(['active', 'failed', 'failed']);
      // a failed connection binds nothing; connecting again with a good token makes it active (the same connection)
      const refused = await app.call('POST', `/integrations/chatapp/${bad.body.id}/numbers`, {
        key,
        body: { phone_number_id: TRAVEL.numbers[0] },
      });
      expect(refused.status).to.equal(422);
      expect(refused.body.error.code).to.equal('CHATAPP_PLATFORM_REFUSED');
      const again = await connect(app, key, TRAVEL.businessAccountId, 'good-token-now');
      expect(again).to.include({ status: 'active', id: bad.body.id });
    });

    it('answers 422 for a body that is not a connection', async () => {
      const r = await app.call('POST', '/integrations/chatapp/connections', { key, body: { business_account_id: '' } });
      expect(r.status).to.equal(422);
      expect(r.body.detail.map((d: { loc: string[] }) => d.loc.join('.'))).to.include.members([
        'body.business_account_id',
        'body.access_token',
      ]);
    });
  });

  describe('numbers', () => {
    it('binds a number of the business account as a chat-only line', async () => {
      const r = await app.call('POST', `/integrations/chatapp/${connectionId}/numbers`, {
        key,
        body: { phone_number_id: COFFEE.numbers[0], agent_id: agentId },
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.include({
        phoneNumberId: COFFEE.numbers[0],
        phoneNumber: COFFEE.phones[0],
        agentId,
        dualChannel: false,
        status: 'bound',
        verifiedName: 'Sandbox Coffee',
      });
      expect(r.body.numberId).to.equal(r.body.id);
      line = r.body;
      const sandbox = await app.call('GET', '/sandbox/chatapp/business-accounts', { key: ADMIN_TOKEN });
      const n = sandbox.body.data[0].numbers.find((x: { phoneNumberId: string }) => x.phoneNumberId === COFFEE.numbers[0]);
      expect(n.registered, 'registered with the platform').to.equal(true);
      const listed = await app.call('GET', `/integrations/chatapp/${connectionId}/numbers`, { key });
      expect(listed.body.data.map((x: { id: string }) => x.id)).to.deep.equal([line.id]);
      // binding again is a no-op
      expect((await bind(app, key, connectionId, COFFEE.numbers[0], agentId)).id).to.equal(line.id);
    });

    it('fails a number that is not in the business account, and refuses one bound by another account (CHATAPP_NUMBER_IN_USE)', async () => {
      const foreign = await app.call('POST', `/integrations/chatapp/${connectionId}/numbers`, {
        key,
        body: { phone_number_id: TRAVEL.numbers[0] },
      });
      // a refusal is no success: 422 with the platform's words; the attempt is kept, failed
      expect(foreign.status, JSON.stringify(foreign.body)).to.equal(422);
      expect(foreign.body.error.code).to.equal('CHATAPP_PLATFORM_REFUSED');
      expect(foreign.body.error.message).to.contain(`not a number of business account ${COFFEE.businessAccountId}`);
      const kept = (await app.call('GET', `/integrations/chatapp/${connectionId}/numbers`, { key })).body.data.find(
        (n: { phoneNumberId: string }) => n.phoneNumberId === TRAVEL.numbers[0],
      );
      expect(kept).to.include({ status: 'failed', numberId: null });
      expect(kept.failureReason).to.contain(`not a number of business account ${COFFEE.businessAccountId}`);
      const other = await app.newAccount('Other');
      const oc = await connect(app, other.apiKey, COFFEE.businessAccountId);
      const taken = await app.call('POST', `/integrations/chatapp/${oc.id}/numbers`, {
        key: other.apiKey,
        body: { phone_number_id: COFFEE.numbers[0] },
      });
      expect(taken.status).to.equal(409);
      expect(taken.body.error.code).to.equal('CHATAPP_NUMBER_IN_USE');
      const missing = await app.call('POST', `/integrations/chatapp/${oc.id}/numbers`, {
        key: other.apiKey,
        body: { phone_number_id: 'not a platform id' },
      });
      expect(missing.status).to.equal(422);
    });

    it('makes a native number dual-channel: one number, two channels in the conversation capabilities', async () => {
      const native = await messagingLine(app, { country: 'CA', name: 'Dual account', registered: false });
      const added = await app.call('POST', `/sandbox/chatapp/business-accounts/${TRAVEL.businessAccountId}/numbers`, {
        key: ADMIN_TOKEN,
        body: { phone_number: native.phoneNumber, verified_name: 'Dual' },
      });
      expect(added.status, JSON.stringify(added.body)).to.equal(200);
      const c = await connect(app, native.key, TRAVEL.businessAccountId);
      const b = await bind(app, native.key, c.id, added.body.phoneNumberId);
      expect(b).to.include({ dualChannel: true, numberId: native.numberId, phoneNumber: native.phoneNumber });
      const who = person();
      // a text first: the conversation of the sms channel lists both channels; then the chat conversation
      const sms = await app.call('POST', '/v1/messages', {
        key: native.key,
        body: { agent_id: native.agentId, to_number: '+13125550170', body: 'hi' },
      });
      expect(sms.status, JSON.stringify(sms.body)).to.equal(201);
      expect(sms.body.channel).to.equal('sms');
      const conv = await app.call('GET', `/v1/conversations/${sms.body.conversation_id}`, { key: native.key });
      expect(conv.body.channel).to.equal('native');
      expect(conv.body.capabilities).to.include({ sendChannel: 'sms' });
      expect(conv.body.capabilities.availableChannels).to.deep.equal(['sms', 'mms', 'chatapp']);
      const inbound = await chatInbound(app, { phone_number_id: added.body.phoneNumberId, from: who, body: 'Hola' });
      expect(inbound.status, JSON.stringify(inbound.body)).to.equal(201);
      // the sandbox platform's report is answered once stored; the send path routes by the read models, which
      // follow (docs/sandbox.md#the-chat-platforms-control-api-and-cli): the reply is sent once they show the chat message
      await eventually(async () => {
        const list = await app.call('GET', '/v1/conversations?limit=100', { key: native.key });
        return list.body.data.some((c: { channel: string; participant: string }) => c.channel === 'chatapp' && c.participant === who);
      }, 'the chat conversation in the read models');
      // the reply goes by chat: the recipient's most recent conversation on the number is a chat one
      const reply = await app.call('POST', '/v1/messages', {
        key: native.key,
        body: { agent_id: native.agentId, to_number: who, body: 'Hello!' },
      });
      expect(reply.status, JSON.stringify(reply.body)).to.equal(201);
      expect(reply.body).to.include({ channel: 'chatapp', from_number: native.phoneNumber, encoding: null, segments: null });
      const chat = await app.call('GET', `/v1/conversations/${reply.body.conversation_id}`, { key: native.key });
      expect(chat.body).to.include({ channel: 'chatapp', phoneNumberId: native.numberId });
      expect(chat.body.capabilities).to.include({ sendChannel: 'chatapp', canSendMessages: true });
      expect(chat.body.capabilities.availableChannels).to.deep.equal(['sms', 'mms', 'chatapp']);
      expect(chat.body.capabilities.chatappWindowExpiresAt).to.be.a('string');
      // `channel` names one explicitly; a US/CA recipient may be texted from the same number
      const explicit = await app.call('POST', '/v1/messages', {
        key: native.key,
        body: { agent_id: native.agentId, to_number: '+13125550170', body: 'by sms', channel: 'sms' },
      });
      expect(explicit.body.channel).to.equal('sms');
      const smsToChatPerson = await app.call('POST', '/v1/messages', {
        key: native.key,
        body: { agent_id: native.agentId, to_number: who, body: 'by sms?', channel: 'sms' },
      });
      // a text to a number outside the US and Canada is taken, and the carrier fails it
      expect(smsToChatPerson.status, JSON.stringify(smsToChatPerson.body)).to.equal(201);
      expect(smsToChatPerson.body.channel).to.equal('sms');
      const failed = await messageWhen(
        app,
        native.key,
        smsToChatPerson.body.conversation_id,
        smsToChatPerson.body.id,
        (m) => m.status === 'failed',
        'the text abroad failed',
      );
      expect(failed.failureReason).to.equal("Messaging to this destination country isn't enabled.");
    });
  });

  describe('sending: inbound, the 24-hour window and templates', () => {
    let who: string;
    let conversationId: string;
    it('takes an inbound chat message to the webhook as agent.message (channel chatapp), and answers free-form inside the window', async () => {
      who = person();
      const r = await chatInbound(app, { phone_number_id: COFFEE.numbers[0], from: who, body: 'Are you open on Sunday?' });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      const evt = await eventually(async () => events('agent.message').find((e) => e.data.messageId === r.body.messageId), 'agent.message');
      expect(evt).to.include({ channel: 'chatapp', agentId });
      expect(evt.data).to.include({
        from: who,
        to: line.phoneNumber,
        numberId: line.numberId,
        message: 'Are you open on Sunday?',
        direction: 'inbound',
      });
      conversationId = evt.data.conversationId;
      const reply = await send({ to_number: who, body: 'Yes, 9 to 5.' });
      expect(reply.status, JSON.stringify(reply.body)).to.equal(201);
      expect(reply.body).to.include({
        channel: 'chatapp',
        status: 'accepted',
        conversation_id: conversationId,
        from_number: line.phoneNumber,
      });
      const m = await messageWhen(app, key, conversationId, reply.body.id, (x) => x.status === 'read', 'read receipt');
      expect(m).to.include({ channel: 'chatapp', direction: 'outbound' });
      expect(m.deliveredAt).to.be.a('string');
      expect(m.readAt).to.be.a('string');
      const sent = await app.call('GET', `/sandbox/chatapp/messages?to=${encodeURIComponent(who)}`, { key: ADMIN_TOKEN });
      expect(sent.body.data[0]).to.include({ kind: 'text', body: 'Yes, 9 to 5.', phoneNumberId: COFFEE.numbers[0], status: 'accepted' });
    });

    it('shows the window in the conversation capabilities: its end is 24 hours after the last inbound message', async () => {
      const c = await app.call('GET', `/v1/conversations/${conversationId}`, { key });
      const inbound = c.body.messages.find((m: { direction: string }) => m.direction === 'inbound');
      expect(Date.parse(c.body.capabilities.chatappWindowExpiresAt) - Date.parse(inbound.receivedAt)).to.equal(24 * 3600_000);
      expect(c.body.capabilities).to.include({ canSendMessages: true, sendChannel: 'chatapp', sendDisabledReason: null });
      expect(c.body.capabilities.availableChannels).to.deep.equal(['chatapp']);
    });

    it('25 hours later refuses a free-form message with 131047, and sends an approved template', async () => {
      const t = await approvedTemplate(app, key, connectionId, { name: 'opening_hours', body: 'Hi {{1}}, we are open {{2}} today.' });
      expect(t).to.include({ status: 'approved', parameterFormat: 'positional' });
      await advanceClock(app, 25 * 3600);
      const refused = await send({ to_number: who, body: 'Still there?' });
      expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
      expect(refused.body.error.code).to.equal('CHATAPP_SEND_REFUSED');
      expect(refused.body.error.message).to.contain('131047');
      const c = await app.call('GET', `/v1/conversations/${conversationId}`, { key });
      expect(c.body.capabilities.canSendMessages).to.equal(false);
      expect(c.body.capabilities.sendDisabledReason).to.match(/^131047/);
      const ok = await send({ to_number: who, template: { name: 'opening_hours', language: 'en_US', variables: ['Ada', '9 to 5'] } });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
      expect(ok.body.channel).to.equal('chatapp');
      const m = await messageWhen(app, key, conversationId, ok.body.id, (x) => x.status === 'read', 'template read');
      expect(m.body).to.equal('Hi Ada, we are open 9 to 5 today.');
      const sent = await app.call('GET', `/sandbox/chatapp/messages?to=${encodeURIComponent(who)}`, { key: ADMIN_TOKEN });
      expect(sent.body.data[0]).to.deep.include({
        kind: 'template',
        template: { name: 'opening_hours', language: 'en_US', values: ['Ada', '9 to 5'] },
      });
      // the recipient writes again: the window opens again for free-form replies
      await chatInbound(app, { phone_number_id: COFFEE.numbers[0], from: who, body: 'Thanks!' });
      const again = await send({ to_number: who, body: 'You are welcome.' });
      expect(again.status, JSON.stringify(again.body)).to.equal(201);
    });

    it('refuses a recipient who never wrote with 131047, and a template whose variables do not fit with 100', async () => {
      const stranger = person();
      const first = await send({ to_number: stranger, body: 'Hello', channel: 'chatapp' });
      expect(first.status).to.equal(400);
      expect(first.body.error.message).to.contain('131047');
      const named = await approvedTemplate(app, key, connectionId, { name: 'order_ready', body: 'Order {{order_id}} is ready, {{name}}.' });
      expect(named).to.include({ parameterFormat: 'named' });
      expect(named.variables).to.deep.equal(['order_id', 'name']);
      for (const variables of [['1', '2'], { order_id: '42' }, { order_id: '42', name: 'Ada', extra: 'x' }, null]) {
        const r = await send({ to_number: stranger, template: { name: 'order_ready', language: 'en_US', variables } });
        expect(r.status, JSON.stringify(variables)).to.equal(400);
        expect(r.body.error.code).to.equal('CHATAPP_SEND_REFUSED');
        expect(r.body.error.message).to.contain('Chat platform error 100');
        expect(r.body.error.details[0].field).to.equal('body.template.variables');
      }
      const positional = await send({ to_number: stranger, template: { name: 'opening_hours', language: 'en_US', variables: { a: 'b' } } });
      expect(positional.status).to.equal(400);
      const good = await send({
        to_number: stranger,
        template: { name: 'order_ready', language: 'en_US', variables: { order_id: '42', name: 'Ada' } },
      });
      expect(good.status, JSON.stringify(good.body)).to.equal(201);
    });

    it('refuses an unknown template (404), one in review or rejected (409), and a template with a body (422)', async () => {
      const to = person();
      const unknown = await send({ to_number: to, template: { name: 'nope', language: 'en_US' } });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.code).to.equal('CHATAPP_TEMPLATE_NOT_FOUND');
      const rejected = await approvedTemplate(app, key, connectionId, { name: 'reject_me', body: 'Buy now!' });
      expect(rejected).to.include({ status: 'rejected' });
      expect(rejected.rejectionReason).to.contain('reject_');
      const r = await send({ to_number: to, template: { name: 'reject_me', language: 'en_US' } });
      expect(r.status).to.equal(409);
      expect(r.body.error.code).to.equal('CHATAPP_TEMPLATE_NOT_APPROVED');
      const both = await send({
        to_number: to,
        body: 'text',
        template: { name: 'opening_hours', language: 'en_US', variables: ['a', 'b'] },
      });
      expect(both.status).to.equal(422);
      const smsTemplate = await send({
        to_number: to,
        channel: 'sms',
        template: { name: 'opening_hours', language: 'en_US', variables: ['a', 'b'] },
      });
      expect(smsTemplate.status).to.equal(422);
    });
  });
  describe('templates', () => {
    it('lists templates with their status, refuses a second one of the same name and language (409) and bodies that are not templates (422)', async () => {
      const list = await app.call('GET', `/integrations/chatapp/${connectionId}/templates`, { key });
      expect(list.status).to.equal(200);
      const byName = Object.fromEntries(list.body.data.map((t: { name: string; status: string }) => [t.name, t.status]));
      expect(byName).to.deep.include({ opening_hours: 'approved', order_ready: 'approved', reject_me: 'rejected' });
      const dup = await app.call('POST', `/integrations/chatapp/${connectionId}/templates`, {
        key,
        body: { name: 'opening_hours', language: 'en_US', category: 'utility', body: 'Other {{1}}' },
      });
      expect(dup.status).to.equal(409);
      expect(dup.body.error.code).to.equal('CHATAPP_TEMPLATE_EXISTS');
      // another language is another template; a rejected one may be created again (a new submission)
      const es = await approvedTemplate(app, key, connectionId, {
        name: 'opening_hours',
        language: 'es',
        body: 'Hola {{1}}, abrimos {{2}}.',
      });
      expect(es.status).to.equal('approved');
      const retry = await app.call('POST', `/integrations/chatapp/${connectionId}/templates`, {
        key,
        body: { name: 'reject_me', language: 'en_US', category: 'MARKETING', body: 'Buy now, {{1}}!', examples: ['Ada'] },
      });
      expect(retry.status, JSON.stringify(retry.body)).to.equal(200);
      expect(retry.body).to.include({ status: 'pending', category: 'marketing', parameterFormat: 'positional' });
      for (const [body, field] of [
        [{ body: 'Hi {{1}} and {{name}}' }, 'body'],
        [{ body: 'Hi {{2}}' }, 'body'],
        [{ body: 'Hi {{Name!}}' }, 'body'],
        [{ body: 'Hi {{1}}', examples: { a: 'b' } }, 'examples'],
        [{ name: 'Bad Name', body: 'x' }, 'name'],
        [{ category: 'promo', body: 'x' }, 'category'],
      ] as const) {
        const r = await app.call('POST', `/integrations/chatapp/${connectionId}/templates`, {
          key,
          body: { name: 'valid_name', language: 'en_US', category: 'utility', ...body },
        });
        expect(r.status, JSON.stringify(body)).to.equal(422);
        expect(JSON.stringify(r.body.error.details)).to.contain(field);
      }
      const missing = await app.call('GET', `/integrations/chatapp/${connectionId}/templates/cht_nope`, { key });
      expect(missing.status).to.equal(404);
      expect(missing.body.error.code).to.equal('CHATAPP_TEMPLATE_NOT_FOUND');
    });
  });

  describe("the platform's error codes and reports", () => {
    /** a send to a magic recipient inside its window (it wrote first), then the message as it ended */
    const sendTo = async (to: string) => {
      await chatInbound(app, { phone_number_id: COFFEE.numbers[0], from: to, body: 'hi' });
      const r = await send({ to_number: to, body: 'hello' });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      return messageWhen(app, key, r.body.conversation_id, r.body.id, (m) => m.status === 'failed', `failure of a send to ${to}`);
    };
    for (const [to, code, category] of [
      ['+447700900026', '131026', 'recipient'],
      ['+447700900042', '131042', 'configuration'],
      ['+447700900051', '131051', 'content'],
      ['+447700900047', '131047', 'wait'],
      ['+447700900100', '100', 'content'],
    ] as const)
      it(`fails an accepted send to ${to} with ${code}, as the platform reports it`, async () => {
        const m = await sendTo(to);
        expect(m).to.include({ errorCode: code, failureCategory: category, retryable: false });
        expect(m.failureReason).to.contain(`Chat platform error ${code}`);
      });

    it('fails template sends from a business account without a payment method with 131042', async () => {
      const c = await connect(app, key, UNPAID.businessAccountId);
      const b = await bind(app, key, c.id, UNPAID.numbers[0], agentId);
      await approvedTemplate(app, key, c.id, { name: 'welcome', body: 'Welcome!' });
      const to = person();
      const r = await send({ number_id: b.numberId, to_number: to, template: { name: 'welcome', language: 'en_US' } });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      const m = await messageWhen(app, key, r.body.conversation_id, r.body.id, (x) => x.status === 'failed', '131042');
      expect(m.errorCode).to.equal('131042');
    });

    it('takes an inbound reaction to agent.reaction (channel chatapp) and media to agent.message', async () => {
      const who = person();
      await chatInbound(app, { phone_number_id: COFFEE.numbers[0], from: who, body: 'Menu?' });
      const sent = await send({ to_number: who, body: 'Here it is', media_urls: ['https://example.com/menu.png'] });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
      const m = await messageWhen(app, key, sent.body.conversation_id, sent.body.id, (x) => x.status === 'read', 'media read');
      expect(m.mediaUrls).to.deep.equal(['https://example.com/menu.png']);
      const platformId = (await app.call('GET', `/sandbox/chatapp/messages?to=${encodeURIComponent(who)}`, { key: ADMIN_TOKEN })).body
        .data[0].platformMessageId;
      const rx1 = await chatInbound(app, {
        phone_number_id: COFFEE.numbers[0],
        from: who,
        reaction: { emoji: '👍', message_id: platformId },
      });
      expect(rx1.status, JSON.stringify(rx1.body)).to.equal(201);
      const evt = await eventually(async () => events('agent.reaction').find((e) => e.data.messageId === sent.body.id), 'agent.reaction');
      expect(evt).to.include({ channel: 'chatapp' });
      expect(evt.data).to.include({ reactionType: '👍', fromNumber: who, direction: 'inbound', messageBody: 'Here it is' });
      const photo = await chatInbound(app, {
        phone_number_id: COFFEE.numbers[0],
        from: who,
        body: 'like this?',
        media_urls: ['https://example.com/p.jpg'],
      });
      const pm = await eventually(
        async () => events('agent.message').find((e) => e.data.messageId === photo.body.messageId),
        'media message',
      );
      expect(pm.data).to.include({ mediaUrl: 'https://example.com/p.jpg', message: 'like this?' });
      expect(pm.channel).to.equal('chatapp');
      expect(pm.recentHistory.at(-1)).to.include({ channel: 'chatapp' });
      const two = await send({ to_number: who, body: 'x', media_urls: ['https://example.com/a.png', 'https://example.com/b.png'] });
      expect(two.status, 'one media file per chat message').to.equal(422);
    });

    it('drops an inbound message for a platform number that is not bound here (404 from the sandbox)', async () => {
      const r = await chatInbound(app, { phone_number_id: TRAVEL.numbers[1], from: person(), body: 'hello?' });
      expect(r.status).to.equal(404);
    });
  });

  describe('switching the channel off (CHATAPP_NOT_ENABLED)', () => {
    it('answers 403 to every chat-app operation that acts, drops inbound chat messages, and works again once switched on', async () => {
      const who = person();
      await chatInbound(app, { phone_number_id: COFFEE.numbers[0], from: who, body: 'hi' });
      const off = await app.call('PATCH', '/integrations/chatapp/settings', { key, body: { enabled: false } });
      expect(off.status).to.equal(200);
      expect(off.body).to.deep.equal({ enabled: false });
      expect((await app.call('GET', `/admin/accounts/${accountId}/chatapp`, { key: ADMIN_TOKEN })).body).to.deep.equal({ enabled: false });
      const refused = [
        await app.call('POST', '/integrations/chatapp/connections', {
          key,
          body: { business_account_id: COFFEE.businessAccountId, access_token: 'token-123' },
        }),
        await app.call('POST', `/integrations/chatapp/${connectionId}/numbers`, { key, body: { phone_number_id: COFFEE.numbers[1] } }),
        await app.call('POST', `/integrations/chatapp/${connectionId}/templates`, {
          key,
          body: { name: 'off', language: 'en', category: 'utility', body: 'x' },
        }),
        await send({ to_number: who, body: 'hello' }),
      ];
      for (const r of refused) {
        expect(r.status, JSON.stringify(r.body)).to.equal(403);
        expect(r.body.error).to.include({ code: 'CHATAPP_NOT_ENABLED', type: 'permission_error' });
      }
      const dropped = await chatInbound(app, { phone_number_id: COFFEE.numbers[0], from: who, body: 'anyone?' });
      expect(dropped.status).to.equal(404);
      // reads still answer
      expect((await app.call('GET', '/integrations/chatapp/connections', { key })).status).to.equal(200);
      const on = await app.call('PATCH', `/admin/accounts/${accountId}/chatapp`, { key: ADMIN_TOKEN, body: { enabled: true } });
      expect(on.body).to.deep.equal({ enabled: true });
      expect((await send({ to_number: who, body: 'back' })).status).to.equal(201);
      const unknown = await app.call('PATCH', '/admin/accounts/acc_nope/chatapp', { key: ADMIN_TOKEN, body: { enabled: true } });
      expect(unknown.status).to.equal(404);
    });
  });

  describe('billing', () => {
    it("never draws on the account's credit nor shows in its usage", async () => {
      const fresh = await app.newAccount('Billing probe');
      const k = fresh.apiKey;
      const agent = (await app.call('POST', '/v1/agents', { key: k, body: { name: 'B' } })).body.id;
      const before = (await app.call('GET', '/v1/usage', { key: k })).body;
      const ledgerBefore = (await app.call('GET', '/v1/billing/ledger', { key: k })).body;
      const c = await connect(app, k, TRAVEL.businessAccountId, 'probe-token');
      await bind(app, k, c.id, TRAVEL.numbers[1], agent);
      await approvedTemplate(app, k, c.id, { name: 'probe', body: 'Probe {{1}}' });
      const who = person();
      await chatInbound(app, { phone_number_id: TRAVEL.numbers[1], from: who, body: 'in' });
      const out = await app.call('POST', '/v1/messages', { key: k, body: { agent_id: agent, to_number: who, body: 'out' } });
      expect(out.status, JSON.stringify(out.body)).to.equal(201);
      const t = await app.call('POST', '/v1/messages', {
        key: k,
        body: { agent_id: agent, to_number: who, template: { name: 'probe', language: 'en_US', variables: ['x'] } },
      });
      expect(t.status).to.equal(201);
      await messageWhen(app, k, out.body.conversation_id, t.body.id, (m) => m.status === 'read', 'read');
      await projectorsCaughtUp(app); // docs/event-store.md#lagging-projectors
      const after = (await app.call('GET', '/v1/usage', { key: k })).body;
      expect(after.balance).to.deep.equal(before.balance);
      expect(after.stats).to.deep.equal(before.stats);
      expect((await app.call('GET', '/v1/billing/ledger', { key: k })).body).to.deep.equal(ledgerBefore);
      const rows = await app.rt
        .get(PLATFORM.ReadDb)
        .selectFrom('analytics_messages')
        .select(['channel', 'counted'])
        .where('account_id', '=', fresh.accountId)
        .execute();
      expect(rows.length, 'the analytics record the chat messages').to.be.greaterThan(0);
      expect(
        rows.filter((r) => r.counted || r.channel !== 'chatapp'),
        'none counted as usage',
      ).to.deep.equal([]);
    });
  });

  describe('unbinding and deleting', () => {
    it('unbinds a number (sends then refused, inbound dropped) and unbinds every number of a deleted connection', async () => {
      const b2 = await bind(app, key, connectionId, COFFEE.numbers[1], agentId);
      const who = person();
      await chatInbound(app, { phone_number_id: COFFEE.numbers[1], from: who, body: 'hi' });
      const u = await app.call('DELETE', `/integrations/chatapp/${connectionId}/numbers/${b2.id}`, { key });
      expect(u.status).to.equal(200);
      expect(u.body.status).to.equal('unbound');
      const unknown = await app.call('GET', `/integrations/chatapp/${connectionId}/numbers/chn_nope`, { key });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.code).to.equal('CHATAPP_NUMBER_NOT_FOUND');
      const r = await send({ number_id: b2.numberId, to_number: who, body: 'still?' });
      expect(r.status, 'an unbound chat-only line is no line').to.equal(404);
      expect((await chatInbound(app, { phone_number_id: COFFEE.numbers[1], from: who, body: 'hello?' })).status).to.equal(404);
      const d = await app.call('DELETE', `/integrations/chatapp/connections/${connectionId}`, { key });
      expect(d.status).to.equal(200);
      expect(d.body).to.include({ success: true, status: 'deleted', id: connectionId });
      expect((await app.call('GET', `/integrations/chatapp/connections/${connectionId}`, { key })).status).to.equal(404);
      await eventually(async () => {
        const n = await app.rt
          .get(PLATFORM.ReadDb)
          .selectFrom('chatapp_numbers')
          .select('status')
          .where('binding_id', '=', line.id)
          .executeTakeFirst();
        return n?.status === 'unbound';
      }, 'numbers of the deleted connection unbound');
      expect((await app.call('DELETE', `/integrations/chatapp/connections/${connectionId}`, { key })).status).to.equal(404);
    });
  });

  describe('rebuild (after everything above)', () => {
    it('replays the chat-app read models and the messaging read models from the log into equal tables', async () => {
      for (const p of [chatappProjector, messagingProjector, analyticsMessagesProjector]) {
        const r = await rebuildProjector(app.rt.get(PLATFORM.ReadDb), app.rt.store, p, { checkOnly: true });
        expect(r.equal, `${p.name}: ${JSON.stringify(r)}`).to.equal(true);
      }
    });
  });
});

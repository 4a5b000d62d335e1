import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { startFakeChatPlatform } from '../support/fake-chat-platform.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { messageWhen } from '../support/messaging.js';
import { eventually } from '../support/numbers.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

const APP_SECRET = 'test-app-secret-0123456789';
const VERIFY_TOKEN = 'verify-me-please';

/**
 * The chat-app channel on the cloud-API adapter (CHATAPP_PROVIDER=cloud) against a local server speaking the
 * platform's documented shapes, with the platform's signed webhook callback (docs/chatapp.md#receiving-from-the-real-platform).
 */
describe('chat-app channel on the cloud API: requests out, signed callbacks in', function () {
  this.timeout(60_000);
  let app: TestApp;
  let fake: Awaited<ReturnType<typeof startFakeChatPlatform>>;
  let rx: Receiver;
  let key: string;
  let agentId: string;
  let connectionId: string;
  before(async () => {
    fake = await startFakeChatPlatform();
    rx = await startReceiver();
    app = await startTestApp({
      CHATAPP_PROVIDER: 'cloud',
      CHATAPP_API_BASE_URL: fake.baseUrl,
      CHATAPP_MESSAGING_PRODUCT: 'chatapp',
      CHATAPP_APP_SECRET: APP_SECRET,
      CHATAPP_VERIFY_TOKEN: VERIFY_TOKEN,
      CHATAPP_REQUEST_TIMEOUT_MS: '2000',
    });
    const acc = await app.newAccount('Cloud chat');
    key = acc.apiKey;
    agentId = (await app.call('POST', '/v1/agents', { key, body: { name: 'Cloud agent' } })).body.id;
    await app.call('POST', '/v1/webhooks', { key, body: { url: rx.url } });
  });
  after(async () => {
    await app.close();
    await rx.close();
    await fake.close();
  });

  /** a callback as the platform posts it, signed with the app secret (or not) */
  const callback = (payload: unknown, secret = APP_SECRET) => {
    const raw = JSON.stringify(payload);
    const sig = `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
    return app.call('POST', '/integrations/chatapp/webhook', { body: raw, headers: { 'x-hub-signature-256': sig } });
  };
  const messages = (phoneNumberId: string, value: Record<string, unknown>) => ({
    object: 'business_account',
    entry: [
      {
        id: fake.businessAccountId,
        changes: [{ field: 'messages', value: { messaging_product: 'chatapp', metadata: { phone_number_id: phoneNumberId }, ...value } }],
      },
    ],
  });
  const unix = () => String(Math.floor(Date.now() / 1000));

  it('answers the subscription handshake only with the verify token', async () => {
    const ok = await app.call(
      'GET',
      `/integrations/chatapp/webhook?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1158201444`,
    );
    expect(ok.status).to.equal(200);
    expect(ok.body).to.equal(1158201444);
    const bad = await app.call('GET', '/integrations/chatapp/webhook?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1');
    expect(bad.status).to.equal(403);
  });

  it('connects, binds and creates a template through the cloud API; the review arrives by callback', async () => {
    const c = await app.call('POST', '/integrations/chatapp/connections', {
      key,
      body: { business_account_id: fake.businessAccountId, access_token: 'cloud-access-token' },
    });
    expect(c.status, JSON.stringify(c.body)).to.equal(200);
    expect(c.body).to.include({ status: 'active', businessName: 'Cloud Coffee Ltd' });
    connectionId = c.body.id;
    const b = await app.call('POST', `/integrations/chatapp/${connectionId}/numbers`, {
      key,
      body: { phone_number_id: '310000000000011', agent_id: agentId, pin: '123456' },
    });
    expect(b.status, JSON.stringify(b.body)).to.equal(200);
    expect(b.body).to.include({ phoneNumber: '+447700900501', status: 'bound' });
    expect(fake.requests.find((r) => r.path.endsWith('/310000000000011/register'))?.body).to.deep.equal({
      messaging_product: 'chatapp',
      pin: '123456',
    });
    expect(fake.requests.every((r) => r.authorization === 'Bearer cloud-access-token')).to.equal(true);
    const t = await app.call('POST', `/integrations/chatapp/${connectionId}/templates`, {
      key,
      body: { name: 'hello_again', language: 'en_US', category: 'utility', body: 'Hello again, {{1}}!', examples: ['Ada'] },
    });
    expect(t.body.status).to.equal('pending');
    const created = await eventually(async () => fake.requests.find((r) => r.path.endsWith('/message_templates')), 'template submitted');
    expect(created.body.components[0]).to.deep.include({ type: 'BODY', text: 'Hello again, {{1}}!' });
    // the fake answered id 51 to the first template; once that is recorded, its review comes as the platform reports it
    // (a review that overtakes the record answers 500, and the platform delivers it again)
    await eventually(async () => {
      const row = await app.rt
        .get(PLATFORM.ReadDb)
        .selectFrom('chatapp_templates')
        .select('platform_template_id')
        .where('template_id', '=', t.body.id)
        .executeTakeFirst();
      return row?.platform_template_id === '51';
    }, 'submission recorded');
    const review = await callback({
      object: 'business_account',
      entry: [
        {
          id: fake.businessAccountId,
          changes: [
            {
              field: 'message_template_status_update',
              value: {
                event: 'APPROVED',
                message_template_id: 51,
                message_template_name: 'hello_again',
                message_template_language: 'en_US',
                reason: 'NONE',
              },
            },
          ],
        },
      ],
    });
    expect(review.status, JSON.stringify(review.body)).to.equal(200);
    await eventually(
      async () =>
        (await app.call('GET', `/integrations/chatapp/${connectionId}/templates/${t.body.id}`, { key })).body.status === 'approved',
      'approved',
    );
  });

  it('fails a binding without a pin (the cloud API registers a number only with its pin) without asking to register it', async () => {
    const b = await app.call('POST', `/integrations/chatapp/${connectionId}/numbers`, {
      key,
      body: { phone_number_id: '310000000000012', agent_id: agentId },
    });
    // a refusal answers 422 with the platform's words; the attempt is kept, failed (docs/chatapp.md#numbers)
    expect(b.status, JSON.stringify(b.body)).to.equal(422);
    expect(b.body.error.code).to.equal('CHATAPP_PLATFORM_REFUSED');
    expect(b.body.error.message).to.match(/Chat platform error 100: .*pin/);
    const listed = (await app.call('GET', `/integrations/chatapp/${connectionId}/numbers`, { key })).body.data;
    const failed = listed.find((n: { phoneNumberId: string }) => n.phoneNumberId === '310000000000012');
    expect(failed.status).to.equal('failed');
    expect(failed.failureReason).to.match(/^Chat platform error 100: .*pin/);
    expect(fake.requests.some((r) => r.path.endsWith('/310000000000012/register'))).to.equal(false);
  });

  it('refuses a callback whose signature does not match (403) and records nothing', async () => {
    const r = await callback(
      messages('310000000000011', {
        messages: [{ from: '447700900810', id: 'wamid.IN0', timestamp: unix(), type: 'text', text: { body: 'forged' } }],
      }),
      'wrong-secret-000',
    );
    expect(r.status).to.equal(403);
    const list = await app.call('GET', '/v1/conversations', { key });
    expect(list.body.total).to.equal(0);
  });

  it('takes an inbound message to the webhook, sends the reply through the cloud API, and follows its statuses', async () => {
    const r = await callback(
      messages('310000000000011', {
        contacts: [{ profile: { name: 'Ada' }, wa_id: '447700900810' }],
        messages: [{ from: '447700900810', id: 'wamid.IN1', timestamp: unix(), type: 'text', text: { body: 'Do you deliver?' } }],
      }),
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.deep.equal({ received: 1 });
    const evt = await eventually(
      async () => rx.received.map((x) => JSON.parse(x.body)).find((e) => e.event === 'agent.message'),
      'agent.message',
    );
    expect(evt).to.include({ channel: 'chatapp', agentId });
    expect(evt.data).to.include({ from: '+447700900810', message: 'Do you deliver?' });
    const reply = await app.call('POST', '/v1/messages', {
      key,
      body: { agent_id: agentId, to_number: '+447700900810', body: 'Yes, within 5 km.' },
    });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(201);
    const out = await eventually(async () => fake.requests.find((x) => x.path.endsWith('/310000000000011/messages')), 'the send');
    expect(out.body).to.deep.include({ to: '447700900810', type: 'text', text: { preview_url: false, body: 'Yes, within 5 km.' } });
    const sent = await messageWhen(app, key, reply.body.conversation_id, reply.body.id, (m) => m.status === 'sent', 'sent');
    const platformId = await eventually(async () => {
      const row = await app.rt
        .get(PLATFORM.ReadDb)
        .selectFrom('message_carrier_ids')
        .select('carrier_message_id')
        .where('message_id', '=', sent.id)
        .executeTakeFirst();
      return row?.carrier_message_id;
    }, 'platform id');
    const statuses = await callback(
      messages('310000000000011', {
        statuses: [
          { id: platformId, status: 'delivered', timestamp: unix(), recipient_id: '447700900810' },
          { id: platformId, status: 'read', timestamp: unix(), recipient_id: '447700900810' },
        ],
      }),
    );
    expect(statuses.body).to.deep.equal({ received: 2 });
    await messageWhen(app, key, reply.body.conversation_id, reply.body.id, (m) => m.status === 'read', 'read by callback');
    // a repeated callback records nothing new
    expect(
      (
        await callback(
          messages('310000000000011', {
            messages: [{ from: '447700900810', id: 'wamid.IN1', timestamp: unix(), type: 'text', text: { body: 'Do you deliver?' } }],
          }),
        )
      ).status,
    ).to.equal(200);
    const conv = await app.call('GET', `/v1/conversations/${reply.body.conversation_id}`, { key });
    expect(conv.body.messageCount).to.equal(2);
  });

  it('fails a message with the code of a failed status, and a send the cloud API refuses (100)', async () => {
    await callback(
      messages('310000000000011', {
        messages: [{ from: '447700900100', id: 'wamid.IN2', timestamp: unix(), type: 'text', text: { body: 'hi' } }],
      }),
    );
    const refused = await app.call('POST', '/v1/messages', { key, body: { agent_id: agentId, to_number: '+447700900100', body: 'hello' } });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(201);
    const m1 = await messageWhen(
      app,
      key,
      refused.body.conversation_id,
      refused.body.id,
      (m) => m.status === 'failed',
      'refused by the cloud API',
    );
    expect(m1.errorCode).to.equal('100');
    await callback(
      messages('310000000000011', {
        messages: [{ from: '447700900826', id: 'wamid.IN3', timestamp: unix(), type: 'text', text: { body: 'hi' } }],
      }),
    );
    const s = await app.call('POST', '/v1/messages', { key, body: { agent_id: agentId, to_number: '+447700900826', body: 'hello' } });
    const sent = await messageWhen(app, key, s.body.conversation_id, s.body.id, (m) => m.status === 'sent', 'sent');
    const out = fake.requests.filter((x) => x.path.endsWith('/messages') && x.body?.to === '447700900826');
    expect(out.length).to.equal(1);
    const row = await app.rt
      .get(PLATFORM.ReadDb)
      .selectFrom('message_carrier_ids')
      .select('carrier_message_id')
      .where('message_id', '=', sent.id)
      .executeTakeFirstOrThrow();
    await callback(
      messages('310000000000011', {
        statuses: [
          {
            id: row.carrier_message_id,
            status: 'failed',
            timestamp: unix(),
            errors: [
              {
                code: 131026,
                title: 'Message undeliverable',
                message: 'Message undeliverable',
                error_data: { details: 'Message Undeliverable.' },
              },
            ],
          },
        ],
      }),
    );
    const failed = await messageWhen(app, key, s.body.conversation_id, s.body.id, (m) => m.status === 'failed', '131026');
    expect(failed).to.include({ errorCode: '131026', failureCategory: 'recipient' });
  });
});

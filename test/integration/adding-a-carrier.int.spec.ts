import { expect } from 'chai';
import { capabilities } from '../../infrastructure/capabilities/index.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { FAST_MESSAGING_ENV, type Line, messageWhen, messagingLine } from '../support/messaging.js';
import { eventually } from '../support/numbers.js';
import { REFUSED_RECIPIENT, TOY, TOY_SIGNATURE, toyCarrier } from '../support/toy-carrier.js';

/**
 * docs/adding-a-channel.md#a-carrier-for-texts, proved: a carrier for texts is one adapter folder
 * (test/support/toy-carrier.ts) chosen by CARRIER. Texts go through the same delivery pipeline to it, its failures
 * become the reasons of docs/message-failures.md by its own table, and its callbacks reach the one inbound handler.
 */
describe('adding a carrier: one adapter folder, the same pipeline', function () {
  this.timeout(60_000);
  let app: TestApp;
  let line: Line;
  const callback = (path: string, body: unknown, signature = TOY_SIGNATURE) =>
    app.call('POST', `/toy-carrier/${path}`, { body, headers: { 'x-toy-signature': signature } });
  const send = (to: string, body: string) =>
    app.call('POST', '/v1/messages', { key: line.key, body: { agent_id: line.agentId, to_number: to, body } });

  before(async () => {
    app = await startTestApp({ ...FAST_MESSAGING_ENV, CARRIER: 'toy' }, { capabilities: [...capabilities, toyCarrier] });
    line = await messagingLine(app);
  });
  after(() => app?.close());

  it('hands a text to the chosen carrier, keyed by the message id, and records its status callbacks', async () => {
    const r = await send('+17735550100', 'through the toy carrier');
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    await messageWhen(app, line.key, r.body.conversation_id, r.body.id, (m) => m.status === 'sent', 'submitted');
    const toy = app.rt.get(TOY.Carrier);
    const i = toy.sent.findIndex((s) => s.idempotencyKey === r.body.id);
    expect(toy.sent[i]).to.include({ to: '+17735550100', body: 'through the toy carrier', from: line.phoneNumber });
    expect((await callback('status', { MessageSid: `TOY${i}`, MessageStatus: 'delivered' }, 'forged')).status).to.equal(403);
    expect((await callback('status', { MessageSid: `TOY${i}`, MessageStatus: 'delivered' })).status).to.equal(200);
    await messageWhen(app, line.key, r.body.conversation_id, r.body.id, (m) => m.status === 'delivered', 'delivered');
  });

  it('fails a message with the reason its own code means, at submission and in a failed status', async () => {
    const refused = await send(REFUSED_RECIPIENT, 'refused at once');
    const m = await messageWhen(app, line.key, refused.body.conversation_id, refused.body.id, (x) => x.status === 'failed', 'refused');
    expect(m).to.include({
      failureReason: 'The recipient has opted out of messages from this number.',
      errorCode: '21610',
      retryable: false,
    });

    const later = await send('+17735550110', 'fails on its way');
    await messageWhen(app, line.key, later.body.conversation_id, later.body.id, (x) => x.status === 'sent', 'submitted');
    const i = app.rt.get(TOY.Carrier).sent.findIndex((s) => s.idempotencyKey === later.body.id);
    await callback('status', { MessageSid: `TOY${i}`, MessageStatus: 'undelivered', ErrorCode: '30003' });
    const failed = await messageWhen(app, line.key, later.body.conversation_id, later.body.id, (x) => x.status === 'failed', 'failed');
    expect(failed).to.include({
      failureReason: "The recipient's phone is unreachable or turned off.",
      errorCode: '30003',
      failureCategory: 'transient',
      retryable: true,
    });
  });

  it('records an inbound text from its callback on the conversation, once however often it comes', async () => {
    const body = { MessageSid: 'TOY-IN-1', From: '+17735550120', To: line.phoneNumber, Body: 'hello from a toy phone' };
    const a = await callback('inbound', body);
    const b = await callback('inbound', body);
    expect(a.status, JSON.stringify(a.body)).to.equal(200);
    expect(b.body.messageId).to.equal(a.body.messageId);
    const conversation = await eventually(async () => {
      const r = await app.call('GET', '/v1/conversations?limit=100', { key: line.key });
      return r.body.data.find((c: { participant: string }) => c.participant === '+17735550120');
    }, 'the conversation');
    await messageWhen(app, line.key, conversation.id, a.body.messageId, (m) => m.body === 'hello from a toy phone', 'the inbound text');
  });
});

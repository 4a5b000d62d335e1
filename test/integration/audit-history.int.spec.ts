import { expect } from 'chai';
import type { HistoryEntry } from '../../application/audit/history.js';
import { endedCall, FAR_END, placeCall, voiceLine } from '../support/calls.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { FAST_MESSAGING_ENV, inbound, messageWhen, messagingLine } from '../support/messaging.js';
import { eventually as until } from '../support/numbers.js';
import { eventually, type Receiver, startReceiver } from '../support/webhook-receiver.js';

/** An entry as the API answers it: the history's own type (JSON keeps every field of it). */
type Entry = HistoryEntry;
type History = { kind: string; id: string; stream: string; at: string | null; status: string | null; record: any; events: Entry[] };

/** An instant before the step that gave the record its final status, and the status the history had then. */
function anEarlierInstant(h: History): { at: string; status: string } | null {
  // before the step that gave the record its final status (events may follow it: a late receipt, say)
  const final = h.events.find((e) => e.status === h.status) ?? h.events.at(-1)!;
  const last = Date.parse(final.time);
  const earlier = h.events.filter((e) => Date.parse(e.time) < last);
  const e = earlier.at(-1);
  return e ? { at: e.time, status: e.status } : null;
}

describe('audit histories: messages, calls, conversations (docs/audit.md)', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ ...FAST_MESSAGING_ENV, SANDBOX_VOICE_WORDS_PER_MINUTE: '6000', SANDBOX_VOICE_RING_MS: '20' });
  });
  after(() => app.close());

  const history = async (key: string, path: string): Promise<{ status: number; body: History }> => {
    const r = await app.call('GET', path, { key });
    return { status: r.status, body: r.body };
  };

  it('answers every event of a message in order, who did it, why, and its status after each step; ?at= answers the message as it was', async () => {
    const line = await messagingLine(app, { country: 'CA', registered: false, name: 'Audited' });
    const sent = await app.call('POST', '/v1/messages', {
      key: line.key,
      headers: { 'x-request-id': 'req-audit-1' },
      body: { agent_id: line.agentId, to_number: '+12125550130', body: 'This one fails' },
    });
    expect(sent.status).to.equal(201);
    const failed = await messageWhen(app, line.key, sent.body.conversation_id, sent.body.id, (m) => m.status === 'failed', 'failed');

    const { status, body: h } = await history(line.key, `/v1/messages/${sent.body.id}/history`);
    expect(status).to.equal(200);
    expect(h).to.include({ kind: 'message', id: sent.body.id, stream: `message-${sent.body.id}`, at: null, status: 'failed' });
    const types = h.events.map((e) => e.type);
    expect(types[0]).to.equal('OutboundMessageAccepted');
    expect(types[1]).to.equal('MessageQueued');
    expect(types).to.include('MessageSubmitted');
    expect(types).to.include('MessageFailed');
    expect(h.events.map((e) => e.seq)).to.deep.equal(h.events.map((_e, i) => i + 1));
    // the acceptance is the conversation's fact, made by the request; the rest the message's own, made by the sender
    const [accepted, queued] = h.events as [Entry, Entry];
    expect(accepted).to.include({ stream: `conversation-${sent.body.conversation_id}`, status: 'accepted', requestId: 'req-audit-1' });
    expect(accepted.actor).to.match(/^key:/);
    expect(queued).to.include({ stream: `message-${sent.body.id}`, revision: 0, status: 'queued', causationId: accepted.eventId });
    expect(queued.actor).to.match(/^system:/);
    expect(h.events.find((e) => e.type === 'MessageSubmitted')!.status).to.equal('sent');
    expect(h.record).to.include({
      status: 'failed',
      direction: 'outbound',
      failureReason: failed.failureReason,
      failureCategory: 'transient',
      body: 'This one fails',
    });

    // as of an instant before the failure: the status it had then, and no failure reason yet
    const earlier = anEarlierInstant(h);
    expect(earlier, 'the message moved at least once after it was accepted').to.not.equal(null);
    const then = (await history(line.key, `/v1/messages/${sent.body.id}/history?at=${encodeURIComponent(earlier!.at)}`)).body;
    expect(then.at).to.equal(earlier!.at);
    expect(then.status).to.equal(earlier!.status).and.not.equal('failed');
    expect(then.record.failureReason).to.equal(null);
    expect(then.events.every((e) => Date.parse(e.time) <= Date.parse(earlier!.at))).to.equal(true);
    expect(then.events.length).to.be.lessThan(h.events.length);

    // before it existed: no record, no events
    const before = (await history(line.key, `/v1/messages/${sent.body.id}/history?at=2000-01-01T00:00:00Z`)).body;
    expect(before).to.include({ status: null, record: null });
    expect(before.events).to.deep.equal([]);
  });

  it('answers an inbound message, received, and the conversation with its status after each step', async () => {
    const line = await messagingLine(app, { country: 'CA', registered: false, name: 'Inbound audit' });
    const r = await inbound(app, { from: '+13125550171', to: line.phoneNumber, body: 'Hello there' });
    expect(r.status).to.equal(201);
    // the carrier's report is answered before the read models that place the message in the account show it
    const inboundMessage = await until(async () => {
      const h = await history(line.key, `/v1/messages/${r.body.messageId}/history`);
      return h.status === 200 ? h : undefined;
    }, 'the inbound message known to its account');
    expect(inboundMessage.body.status).to.equal('received');
    expect(inboundMessage.body.events[0]!.type).to.equal('InboundMessageReceived');

    const conversationId = inboundMessage.body.record.conversationId as string;
    await app.call('POST', '/v1/messages', { key: line.key, body: { agent_id: line.agentId, to_number: '+13125550171', body: 'Hi!' } });
    const c = (await history(line.key, `/v1/conversations/${conversationId}/history`)).body;
    expect(c.events.map((e) => e.type)).to.deep.equal(['ConversationStarted', 'InboundMessageReceived', 'OutboundMessageAccepted']);
    expect(c.events.map((e) => e.status)).to.deep.equal(['awaiting_reply', 'active', 'active']);
    expect(c.record).to.include({ conversationId, participant: '+13125550171', messageCount: 2, inboundCount: 1, outboundSinceReply: 1 });
    const first = (await history(line.key, `/v1/conversations/${conversationId}/history?at=${encodeURIComponent(c.events[0]!.time)}`)).body;
    expect(first.record.messageCount).to.be.lessThan(2);
  });

  it('answers a call from placing to its end, with the turns', async () => {
    const line = await voiceLine(app, { beginMessage: 'Hello from audit.', voiceMode: 'hosted', systemPrompt: 'Be brief.' }, 'Call audit');
    const call = await placeCall(app, line, { toNumber: FAR_END.talker });
    await endedCall(app, line.key, call.id, 40);
    const h = (await history(line.key, `/v1/calls/${call.id}/history`)).body;
    const types = h.events.map((e) => e.type);
    expect(types[0]).to.equal('CallPlaced');
    expect(types).to.include.members(['CallAnswered', 'AgentTurnRecorded', 'CallerTurnRecorded', 'CallEnded']);
    expect(h.events[0]!.status).to.equal('in-progress');
    expect(h.events.find((e) => e.type === 'CallEnded')!.status).to.equal('completed');
    expect(h.status).to.equal('completed');
    expect(h.record).to.include({ callId: call.id, direction: 'outbound', disconnectionReason: 'user_hangup', phase: 'ended' });
    expect(h.record.turns).to.equal(types.filter((t) => t === 'AgentTurnRecorded' || t === 'CallerTurnRecorded').length);
    const placed = (await history(line.key, `/v1/calls/${call.id}/history?at=${encodeURIComponent(h.events[0]!.time)}`)).body;
    expect(placed.status).to.equal('in-progress');
    expect(placed.record.endedAt).to.equal(null);
  });

  it("answers 404 for another account's message, call and conversation, and for unknown ids; 422 for a bad ?at=", async () => {
    const mine = await messagingLine(app, { country: 'CA', registered: false, name: 'Owner' });
    const sent = (
      await app.call('POST', '/v1/messages', { key: mine.key, body: { agent_id: mine.agentId, to_number: '+13125550172', body: 'x' } })
    ).body;
    const { apiKey: other } = await app.newAccount('Other');
    for (const path of [`/v1/messages/${sent.id}/history`, `/v1/conversations/${sent.conversation_id}/history`]) {
      expect((await app.call('GET', path, { key: mine.key })).status, path).to.equal(200);
      const r = await app.call('GET', path, { key: other });
      expect(r.status, path).to.equal(404);
      expect(JSON.stringify(r.body)).to.not.include(sent.id);
    }
    expect((await app.call('GET', '/v1/messages/msg_nope/history', { key: mine.key })).body.error.code).to.equal('MESSAGE_NOT_FOUND');
    expect((await app.call('GET', '/v1/calls/call_nope/history', { key: mine.key })).body.error.code).to.equal('CALL_NOT_FOUND');
    expect((await app.call('GET', '/v1/conversations/conv_nope/history', { key: mine.key })).status).to.equal(404);
    expect((await app.call('GET', '/v1/webhooks/deliveries/whd_nope/history', { key: mine.key })).status).to.equal(404);
    const bad = await app.call('GET', `/v1/messages/${sent.id}/history?at=yesterday`, { key: mine.key });
    expect(bad.status).to.equal(422);
    expect(bad.body.detail[0].loc).to.deep.equal(['query', 'at']);
  });
});

describe('delivery replay: retry, recover, and the warning before a webhook is disabled (docs/webhooks.md)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let rx: Receiver;
  let failing = true;
  before(async () => {
    app = await startTestApp({ WEBHOOK_POLL_INTERVAL_MS: '20', SANDBOX_CLOCK_REFRESH_MS: '50' });
    rx = await startReceiver(() => (failing ? { status: 500, body: 'down' } : { status: 200, body: 'ok' }));
  });
  after(async () => {
    await rx.close();
    await app.close();
  });

  type Delivery = { id: string; status: string; attemptCount: number; nextRetryAt: string | null; attempts: { attempt: number }[] };
  const deliveries = async (key: string): Promise<Delivery[]> =>
    (await app.call('GET', '/v1/webhooks/deliveries?limit=100', { key })).body.items;
  const platformNow = async (): Promise<string> => (await app.call('GET', '/sandbox/clock', { key: ADMIN_TOKEN })).body.now;
  const advance = (seconds: number) => app.call('POST', '/sandbox/clock', { key: ADMIN_TOKEN, body: { advanceSeconds: seconds } });

  /** New agent.created deliveries for `n` new agents, each through its first (failed) attempt. */
  async function newDeliveries(key: string, n: number): Promise<string[]> {
    const before = new Set((await deliveries(key)).map((d) => d.id));
    for (let i = 0; i < n; i++) await app.call('POST', '/v1/agents', { key, body: { name: `Agent ${i}` } });
    return (await eventually(
      async () => {
        const fresh = (await deliveries(key)).filter((d) => !before.has(d.id));
        const attempted = (d: Delivery) => d.attemptCount >= 1 && (d.status !== 'pending' || d.nextRetryAt !== null);
        return fresh.length === n && fresh.every(attempted) ? fresh.map((d) => d.id) : undefined;
      },
      20_000,
      `${n} deliveries attempted`,
    ))!;
  }

  /** Moves the sandbox clock past each retry until every delivery in `ids` has ended. */
  async function walkToTheEnd(key: string, ids: readonly string[]): Promise<void> {
    for (let round = 0; round < 8; round++) {
      const now = await deliveries(key);
      const open = now.filter((d) => ids.includes(d.id) && d.status === 'pending');
      if (open.length === 0) return;
      const counts = new Map(open.map((d) => [d.id, d.attemptCount]));
      await advance(13 * 3600);
      await eventually(
        async () =>
          (await deliveries(key))
            .filter((d) => counts.has(d.id))
            .every((d) => d.status !== 'pending' || (d.attemptCount > counts.get(d.id)! && d.nextRetryAt !== null)),
        20_000,
        'the next attempts',
      );
    }
    throw new Error('deliveries did not end');
  }

  it('sends a failed delivery again as a new attempt with the same X-Webhook-ID, recorded in its history', async () => {
    failing = true;
    const { apiKey: key } = await app.newAccount('Replay');
    await app.call('POST', '/v1/webhooks', { key, body: { url: rx.url, events: ['agent.created'] } });
    const [id] = (await newDeliveries(key, 1)) as [string];

    const early = await app.call('POST', `/v1/webhooks/deliveries/${id}/retry`, { key });
    expect(early.status).to.equal(409);
    expect(early.body.error.code).to.equal('WEBHOOK_DELIVERY_PENDING');

    await walkToTheEnd(key, [id]);
    const ended = (await deliveries(key)).find((d) => d.id === id)!;
    expect(ended).to.include({ status: 'failed', attemptCount: 6 });
    // the health reactor marks the webhook after the delivery log shows the failure
    await eventually(async () => (await app.call('GET', '/v1/webhooks', { key })).body.status === 'failing', 20_000, 'the webhook failing');

    failing = false;
    const sentBefore = rx.received.length;
    const r = await app.call('POST', `/v1/webhooks/deliveries/${id}/retry`, { key, headers: { 'x-request-id': 'req-retry-1' } });
    expect(r.status).to.equal(202);
    expect(r.body).to.include({ id, status: 'pending', attemptCount: 6 });
    const done = (await eventually(
      async () => (await deliveries(key)).find((d) => d.id === id && d.status === 'success'),
      20_000,
      'the retry delivered',
    ))!;
    expect(done.attemptCount).to.equal(7);
    expect(done.attempts.map((a) => a.attempt)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
    const forThis = rx.received.filter((x) => x.headers['x-webhook-id'] === id);
    expect(forThis).to.have.length(7);
    expect(rx.received.slice(sentBefore).map((x) => x.headers['x-webhook-id'])).to.deep.equal([id]);
    expect(forThis.at(-1)!.body).to.equal(forThis[0]!.body);

    const h = (await app.call('GET', `/v1/webhooks/deliveries/${id}/history`, { key })).body as History;
    const tail = h.events.slice(-4);
    expect(tail.map((e) => [e.type, e.status])).to.deep.equal([
      ['WebhookDeliveryFailed', 'failed'],
      ['WebhookDeliveryRetryRequested', 'pending'],
      ['WebhookAttemptSucceeded', 'pending'],
      ['WebhookDeliverySucceeded', 'success'],
    ]);
    expect(tail[1]!.requestId).to.equal('req-retry-1');
    expect(tail[1]!.actor).to.match(/^key:/);
    expect(tail[1]!.data).to.include({ attempt: 7, previousStatus: 'failed', source: 'retry' });
    expect(h.record).to.include({ status: 'success', attempts: 7 });
    // a delivered retry shows the endpoint is back
    await eventually(async () => (await app.call('GET', '/v1/webhooks', { key })).body.status === 'active', 10_000, 'webhook active again');

    const gone = await app.call('POST', '/v1/webhooks/deliveries/whd_nope/retry', { key });
    expect(gone.status).to.equal(404);
    expect(gone.body.error.code).to.equal('WEBHOOK_DELIVERY_NOT_FOUND');
    const { apiKey: other } = await app.newAccount('Not the owner');
    expect((await app.call('POST', `/v1/webhooks/deliveries/${id}/retry`, { key: other })).status).to.equal(404);
  });

  it('recovers every delivery that failed since a date-time, with a count of what it queued', async () => {
    failing = true;
    const { apiKey: key } = await app.newAccount('Recover');
    await app.call('POST', '/v1/webhooks', { key, body: { url: rx.url, events: ['agent.created'] } });
    const [old] = (await newDeliveries(key, 1)) as [string];
    await walkToTheEnd(key, [old]);
    const since = await platformNow();
    const ids = await newDeliveries(key, 2);
    await walkToTheEnd(key, ids);
    // a test send that failed is never recovered
    expect((await app.call('POST', '/v1/webhooks/test', { key })).body.success).to.equal(false);

    failing = false;
    const r = await app.call('POST', '/v1/webhooks/deliveries/recover', { key, body: { since } });
    expect(r.status).to.equal(202);
    expect(r.body).to.include({ since: new Date(since).toISOString(), queued: 2, skipped: 0, hasMore: false });
    expect([...r.body.deliveryIds].sort()).to.deep.equal([...ids].sort());
    await eventually(
      async () => (await deliveries(key)).filter((d) => ids.includes(d.id)).every((d) => d.status === 'success'),
      20_000,
      'recovered deliveries delivered',
    );
    expect((await deliveries(key)).find((d) => d.id === old)!.status).to.equal('failed');
    const again = await app.call('POST', '/v1/webhooks/deliveries/recover', { key, body: { since } });
    expect(again.body).to.include({ queued: 0 });
    expect((await app.call('POST', '/v1/webhooks/deliveries/recover', { key, body: { since: 'last week' } })).status).to.equal(422);
  });

  it('warns the account before its webhook is disabled: a notice in the delivery log and an e-mail to its address', async () => {
    failing = true;
    const email = 'warned@example.com';
    const signUp = await app.call('POST', '/v0/agent/sign-up', { body: { human_email: email } });
    const code = (await app.call('GET', `/sandbox/outbox?email=${encodeURIComponent(email)}`, { key: ADMIN_TOKEN })).body.data[0].code;
    const verified = await app.call('POST', '/v0/agent/verify', {
      body: { verification_id: signUp.body.verification_id, otp_code: code },
    });
    expect(verified.status).to.equal(200);
    const key = verified.body.api_key as string;
    await app.call('POST', '/v1/webhooks', { key, body: { url: rx.url, events: ['agent.created'] } });

    const four = await newDeliveries(key, 4);
    await walkToTheEnd(key, four);
    const notices = (await eventually(
      async () => {
        const n = (await app.call('GET', '/v1/webhooks/notices', { key })).body.data as any[];
        return n.some((x) => x.kind === 'disable_warning' && x.email?.status === 'sent') ? n : undefined;
      },
      20_000,
      'the warning mailed',
    ))!;
    const warning = notices.find((x) => x.kind === 'disable_warning');
    expect(warning).to.include({ consecutiveFailures: 4, url: rx.url });
    expect(warning.email).to.deep.equal({ status: 'sent', to: email });
    expect(warning.message).to.include('one more');
    const log = (await app.call('GET', '/v1/webhooks/deliveries', { key })).body;
    expect(log.notices.map((x: { id: string }) => x.id)).to.include(warning.id);
    const mail = (await app.call('GET', `/sandbox/outbox?email=${encodeURIComponent(email)}`, { key: ADMIN_TOKEN })).body.data[0];
    expect(mail.subject).to.include('will be disabled');
    expect(mail.body).to.include(rx.url);
    await eventually(async () => (await app.call('GET', '/v1/webhooks', { key })).body.status === 'failing', 20_000, 'the webhook failing');

    // the next exhausted delivery disables it; a disabled webhook takes no retry
    const [fifth] = (await newDeliveries(key, 1)) as [string];
    await walkToTheEnd(key, [fifth]);
    await eventually(async () => (await app.call('GET', '/v1/webhooks', { key })).body.status === 'disabled', 10_000, 'disabled');
    // the notices are another projector's: it may show the disabling a moment after the webhook does
    const kinds = await eventually(
      async () => {
        const k = (await app.call('GET', '/v1/webhooks/notices', { key })).body.data.map((x: { kind: string }) => x.kind) as string[];
        return k.length >= 2 ? k : undefined;
      },
      20_000,
      'the disabled notice',
    );
    expect(kinds).to.deep.equal(['disabled', 'disable_warning']);
    const refused = await app.call('POST', `/v1/webhooks/deliveries/${fifth}/retry`, { key });
    expect(refused.status).to.equal(409);
    expect(refused.body.error.code).to.equal('WEBHOOK_NOT_SENDABLE');
  });
});

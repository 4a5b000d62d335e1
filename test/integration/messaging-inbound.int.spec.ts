import { expect } from 'chai';
import { MESSAGING } from '../../infrastructure/messaging/tokens.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { WEBHOOKS } from '../../infrastructure/webhooks/tokens.js';
import { analyticsMessagesProjector } from '../../projections/analytics/analytics.projectors.js';
import { messagingProjector } from '../../projections/messaging/messaging.projector.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { FAST_MESSAGING_ENV, inbound, type Line, messageWhen, messagingLine, settings } from '../support/messaging.js';
import { eventually } from '../support/numbers.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

let seq = 0;
const recipient = () => `+1773555${String(1000 + 10 * seq++)}`; // ends in 0: not a landline, not magic

describe('messaging: inbound texts, webhooks, opt-out, receipts and failures', function () {
  this.timeout(60_000);
  let app: TestApp;
  let line: Line;
  let rx: Receiver;
  before(async () => {
    app = await startTestApp(FAST_MESSAGING_ENV);
    rx = await startReceiver();
    line = await messagingLine(app);
    const w = await app.call('POST', '/v1/webhooks', { key: line.key, body: { url: `${rx.url}/hook`, contextLimit: 5 } });
    expect(w.status, JSON.stringify(w.body)).to.equal(200);
  });
  after(async () => {
    await rx.close();
    await app.close();
  });

  const send = (to: string, body: string, l = line) =>
    app.call('POST', '/v1/messages', { key: l.key, body: { agent_id: l.agentId, to_number: to, body } });
  const events = (event: string) => rx.received.map((r) => JSON.parse(r.body)).filter((b) => b.event === event);
  const conversationWith = async (participant: string, l = line) => {
    const r = await app.call('GET', '/v1/conversations?limit=100', { key: l.key });
    return r.body.data.find((c: { participant: string }) => c.participant === participant) as { id: string } | undefined;
  };

  it("keeps a deleted agent's conversations with no agent, as its numbers and calls, with no message after the deletion", async () => {
    const l = await messagingLine(app, { country: 'CA', name: 'Leaving' });
    expect((await inbound(app, { from: '+13125550177', to: l.phoneNumber, body: 'hello?' })).status).to.equal(201);
    const before = await eventually(async () => conversationWith('+13125550177', l), 'the conversation');
    expect((await app.call('GET', `/v1/conversations/${before.id}`, { key: l.key })).body.agentId).to.equal(l.agentId);
    expect((await app.call('DELETE', `/v1/agents/${l.agentId}`, { key: l.key })).status).to.equal(200);
    await eventually(
      async () => (await app.call('GET', `/v1/conversations/${before.id}`, { key: l.key })).body.agentId === null || undefined,
      'the conversation without its agent',
    );
    const listed = (await app.call('GET', '/v1/conversations', { key: l.key })).body.data;
    expect(listed.map((c: { agentId: string | null }) => c.agentId)).to.deep.equal([null]);
    // the number lets go of its agent on its own projection, which may still lag the conversation's
    await eventually(
      async () => (await app.call('GET', `/v1/numbers/${l.numberId}`, { key: l.key })).body.agentId === null || undefined,
      'the number without its agent',
    );
  });

  it('stores an inbound text and sends agent.message with history and the conversation state', async () => {
    const from = recipient();
    const first = await send(from, 'Your table is booked for 8pm.');
    expect(first.status).to.equal(201);
    const patched = await app.call('PATCH', `/v1/conversations/${first.body.conversation_id}`, {
      key: line.key,
      body: { conversationState: { stage: 'booked' } },
    });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body.conversationState).to.deep.equal({ stage: 'booked' });
    const r = await inbound(app, { from, to: line.phoneNumber, body: 'Can we make it 9?' });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const { messageId } = r.body;
    const evt = await eventually(async () => events('agent.message').find((e) => e.data.messageId === messageId), 'agent.message');
    expect(evt).to.include({ event: 'agent.message', channel: 'sms', agentId: line.agentId });
    expect(evt.data).to.include({
      conversationId: first.body.conversation_id,
      numberId: line.numberId,
      from,
      to: line.phoneNumber,
      message: 'Can we make it 9?',
      direction: 'inbound',
      mediaUrl: null,
    });
    expect(evt.data.contact).to.equal(null);
    expect(evt.conversationState).to.deep.equal({ stage: 'booked' });
    expect(evt.recentHistory.map((h: { content: string }) => h.content)).to.deep.equal(['Your table is booked for 8pm.']);
    const detail = await app.call('GET', `/v1/conversations/${first.body.conversation_id}`, { key: line.key });
    expect(detail.body.messages.map((m: { body: string }) => m.body)).to.deep.equal(['Your table is booked for 8pm.', 'Can we make it 9?']);
    expect(detail.body.messages[1]).to.include({ direction: 'inbound', status: 'received', fromNumber: from });
  });

  it("looks up the payloads' context of several texts of several conversations in one go, as each alone would see it", async () => {
    // two conversations of this line with a few messages each, one with a caller-written state and a contact
    const [a, b] = [recipient(), recipient()];
    const sent = { a: [] as string[], b: [] as string[] };
    for (const [who, list] of [
      [a, sent.a],
      [b, sent.b],
    ] as const)
      for (let i = 0; i < 3; i++) {
        const r = await send(who, `to ${who} #${i}`);
        expect(r.status, JSON.stringify(r.body)).to.equal(201);
        list.push(r.body.id);
      }
    const conv = async (who: string) => (await eventually(async () => conversationWith(who), 'the conversation')).id;
    const [ca, cb] = [await conv(a), await conv(b)];
    await app.call('PATCH', `/v1/conversations/${ca}`, { key: line.key, body: { conversationState: { stage: 'a' } } });
    const contact = await app.call('POST', '/v1/contacts', { key: line.key, body: { phoneNumber: b, name: 'Bea' } });
    expect(contact.status, JSON.stringify(contact.body)).to.equal(201);
    const texts = await Promise.all([a, b, a].map((from, i) => inbound(app, { from, to: line.phoneNumber, body: `from ${from} #${i}` })));
    const [ia, ib, ia2] = texts.map((t) => t.body.messageId as string);
    // what one conversation shows, oldest first, as the payloads' history items
    const shown = async (id: string) => {
      const r = await app.call('GET', `/v1/conversations/${id}?message_limit=200`, { key: line.key });
      return r.body.messages.map((m: { id: string; body: string; direction: string; channel: string; receivedAt: string }) => ({
        messageId: m.id,
        content: m.body,
        direction: m.direction,
        channel: m.channel,
        at: m.receivedAt,
      })) as { messageId: string }[];
    };
    await eventually(
      async () => ((await shown(ca)).length === 5 && (await shown(cb)).length === 4) || undefined,
      'the texts in the read model',
    );
    const [ha, hb] = [await shown(ca), await shown(cb)];
    const latest = (h: { messageId: string }[], own: string, limit: number) => h.filter((m) => m.messageId !== own).slice(-limit);

    const q = (
      conversationId: string | null,
      excludeMessageId: string | null,
      limit: number,
      contactNumber: string | null,
      accountId = line.accountId,
    ) => ({
      accountId,
      conversationId,
      limit,
      excludeMessageId,
      contactNumber,
    });
    const got = await app.rt.get(WEBHOOKS.ConversationContext).contexts([
      q(ca, ia!, 2, a),
      q(cb, ib!, 3, b),
      q(ca, ia2!, 10, a),
      q(cb, ib!, 0, null),
      q(ca, ia!, 5, b, 'acc_someone_else'), // another account's conversation and contact: nothing
      q(null, null, 5, b),
    ]);
    const bea = { id: contact.body.id, name: 'Bea', email: null, phoneNumber: b };
    expect(got).to.deep.equal([
      { recentHistory: latest(ha, ia!, 2), conversationState: { stage: 'a' }, contact: null },
      { recentHistory: latest(hb, ib!, 3), conversationState: null, contact: bea },
      { recentHistory: latest(ha, ia2!, 10), conversationState: { stage: 'a' }, contact: null },
      { recentHistory: [], conversationState: null, contact: null },
      { recentHistory: [], conversationState: null, contact: null },
      { recentHistory: [], conversationState: null, contact: bea },
    ]);
    expect(got[2]!.recentHistory.map((h) => h.messageId)).to.include.members([...sent.a, ia!]);
  });

  it('stores a repeated carrier callback once, and drops a text for a number that is not active here', async () => {
    const from = recipient();
    const handler = app.rt.get(MESSAGING.Inbound);
    const sms = {
      channel: 'sms',
      providerMessageId: `dup-${Date.now()}`,
      from,
      to: line.phoneNumber,
      body: 'hi',
      mediaUrls: [],
      receivedAt: new Date().toISOString(),
      group: null,
      reaction: null,
    };
    // each waits for the read models to show what it appended: a conversation row can be read before its first
    // text is counted (the projector may take the two events in separate batches)
    const a = await handler.message(sms, { readYourWrites: true });
    const b = await handler.message(sms, { readYourWrites: true });
    expect(b).to.deep.equal(a);
    const conv = await eventually(() => conversationWith(from), 'conversation');
    const detail = await app.call('GET', `/v1/conversations/${conv.id}`, { key: line.key });
    expect(detail.body.messageCount).to.equal(1);
    const dropped = await inbound(app, { from, to: '+12025550999', body: 'nobody home' });
    expect(dropped.status).to.equal(404);
  });

  it("finds a receipt's message by its channel and the provider's id: another channel's report with the same id changes nothing", async () => {
    const to = recipient();
    const r = await send(to, 'one id, one channel');
    expect(r.status).to.equal(201);
    await messageWhen(app, line.key, r.body.conversation_id, r.body.id, (m) => m.status === 'delivered', 'delivered');
    const sent = await app.call('GET', `/sandbox/messages?to=${encodeURIComponent(to)}`, { key: ADMIN_TOKEN });
    const carrierMessageId: string = sent.body.data[0].carrierMessageId;
    const inbound = app.rt.get(MESSAGING.Inbound);
    const read = {
      providerMessageId: carrierMessageId,
      receiptId: `other-${carrierMessageId}`,
      status: 'read' as const,
      at: new Date().toISOString(),
      failure: null,
    };
    const err = await inbound.receipt({ ...read, channel: 'chatapp' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.an('error');
    expect(String(err), String((err as Error)?.message)).to.match(/no chatapp message with provider id/);
    const receipts = async () =>
      (await app.rt.store.readStream(`message-${r.body.id}`)).filter(
        (e) => e.type === 'MessageReceiptRecorded' && (e.data as { receiptId: string }).receiptId === read.receiptId,
      );
    expect(await receipts()).to.have.length(0);
    await inbound.receipt({ ...read, channel: 'sms' });
    await messageWhen(
      app,
      line.key,
      r.body.conversation_id,
      r.body.id,
      (x) => x.status === 'read',
      'read by the receipt of its own channel',
    );
  });

  it('sends media and group texts to one conversation each', async () => {
    const a = recipient();
    const b = recipient();
    const mms = await inbound(app, { from: a, to: line.phoneNumber, body: '', media_urls: ['https://example.com/p.jpg'] });
    expect(mms.status, JSON.stringify(mms.body)).to.equal(201);
    const mmsEvent = await eventually(
      async () => events('agent.message').find((e) => e.data.messageId === mms.body.messageId),
      'mms event',
    );
    expect(mmsEvent.channel).to.equal('mms');
    expect(mmsEvent.data.mediaUrls).to.deep.equal(['https://example.com/p.jpg']);
    const out = await app.call('POST', '/v1/messages', {
      key: line.key,
      body: { agent_id: line.agentId, recipients: [a, b], body: 'Hi both' },
    });
    expect(out.status, JSON.stringify(out.body)).to.equal(201);
    const g = await inbound(app, {
      from: b,
      to: line.phoneNumber,
      body: 'Hi!',
      group: { participants: [a, b, line.phoneNumber], name: 'Trip' },
    });
    expect(g.status, JSON.stringify(g.body)).to.equal(201);
    const detail = await eventually(async () => {
      const r = await app.call('GET', `/v1/conversations/${out.body.conversation_id}`, { key: line.key });
      return r.body.messageCount === 2 ? r.body : undefined;
    }, 'group conversation has both');
    expect(detail).to.include({ isGroup: true });
    expect(detail.participants.map((p: { identifier: string }) => p.identifier)).to.deep.equal([a, b].sort());
  });

  describe('opt-out', () => {
    it('STOP opts the sender out: confirmation sent, later sends accepted then failed, the conversation says so; START lifts it', async () => {
      const who = recipient();
      await inbound(app, { from: who, to: line.phoneNumber, body: 'hello' });
      const stop = await inbound(app, { from: who, to: line.phoneNumber, body: ' Stop ' });
      const conv = await eventually(() => conversationWith(who), 'conversation');
      const stopEvent = await eventually(
        async () => events('agent.message').find((e) => e.data.messageId === stop.body.messageId),
        'STOP reaches the webhook',
      );
      expect(stopEvent.data.keyword).to.deep.equal({ kind: 'stop', keyword: 'STOP' });
      const confirmation = await eventually(async () => {
        const d = (await app.call('GET', `/v1/conversations/${conv.id}`, { key: line.key })).body;
        return d.messages.find((m: { direction: string; body: string }) => m.direction === 'outbound' && m.body.includes('unsubscribed'));
      }, 'confirmation');
      expect(confirmation.body).to.contain('START');
      const detail = await eventually(async () => {
        const d = (await app.call('GET', `/v1/conversations/${conv.id}`, { key: line.key })).body;
        return d.capabilities.canSendMessages === false ? d : undefined;
      }, 'capabilities show the opt-out');
      expect(detail.capabilities.sendDisabledReason).to.contain('opted out');
      const after = await send(who, 'one more thing');
      expect(after.status).to.equal(201);
      const failed = await messageWhen(app, line.key, conv.id, after.body.id, (m) => m.status === 'failed', 'failed');
      expect(failed).to.include({
        failureReason: 'The recipient has opted out of messages from this number.',
        failureCategory: 'recipient',
        retryable: false,
      });
      await inbound(app, { from: who, to: line.phoneNumber, body: 'START' });
      await eventually(
        async () => (await app.call('GET', `/v1/conversations/${conv.id}`, { key: line.key })).body.capabilities.canSendMessages,
        'lifted',
      );
      const again = await send(who, 'welcome back');
      await messageWhen(app, line.key, conv.id, again.body.id, (m) => m.status === 'delivered', 'delivered again');
    });

    it('HELP answers the configured help text; an account-wide opt-out covers its other numbers', async () => {
      const l = await messagingLine(app, { name: 'Opt-out scope' });
      await settings(app, l.accountId, { optOutScope: 'account', helpReply: 'Acme help: call 555.' });
      const second = await app.call('POST', '/v1/numbers', { key: l.key, body: { country: 'US', agentId: l.agentId } });
      const who = recipient();
      await inbound(app, { from: who, to: l.phoneNumber, body: 'help' });
      const conv = await eventually(() => conversationWith(who, l), 'conversation');
      await eventually(async () => {
        const d = (await app.call('GET', `/v1/conversations/${conv.id}`, { key: l.key })).body;
        return d.messages.some((m: { body: string }) => m.body === 'Acme help: call 555.');
      }, 'help answer');
      await inbound(app, { from: who, to: l.phoneNumber, body: 'STOPALL' });
      await eventually(
        async () => !(await app.call('GET', `/v1/conversations/${conv.id}`, { key: l.key })).body.capabilities.canSendMessages,
        'opted out',
      );
      const other = await app.call('POST', '/v1/messages', {
        key: l.key,
        body: { number_id: second.body.id, to_number: who, body: 'from the other number' },
      });
      expect(other.status).to.equal(201);
      await messageWhen(
        app,
        l.key,
        other.body.conversation_id,
        other.body.id,
        (m) => m.failureReason?.includes('opted out'),
        'failed on the other number',
      );
    });
  });

  describe('receipts and failures (sandbox magic numbers)', () => {
    const outcome = async (to: string, done: (m: any) => boolean) => {
      const r = await send(to, 'magic');
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      return messageWhen(app, line.key, r.body.conversation_id, r.body.id, done, `outcome for ${to}`);
    };
    const cases: [string, string, string, boolean][] = [
      ['+12125550125', 'recipient', "The recipient's number is a landline or can't receive SMS.", false],
      ['+12125550130', 'transient', 'A temporary error occurred. Retry shortly.', true],
      ['+12125550143', 'wait', 'Messages from this number were rate-limited by the carrier. Retry shortly.', true],
      ['+12125550149', 'configuration', 'The messaging campaign is inactive for this destination.', false],
      ['+12125550159', 'spam', 'The message was blocked by spam filtering.', false],
      ['+12125550174', 'content', 'The carrier rejected the message.', false],
    ];
    for (const [to, category, reason, retryable] of cases)
      it(`fails a text to ${to} with a ${category} reason`, async () => {
        const m = await outcome(to, (x) => x.status === 'failed');
        expect(m).to.include({ failureReason: reason, failureCategory: category, retryable });
        expect(m.errorCode).to.be.a('string');
      });

    it('ends delivered when receipts come out of order, and keeps every receipt (duplicates too) in the history', async () => {
      const late = await outcome('+14155550122', (m) => m.status === 'delivered');
      const dup = await outcome('+14155550123', (m) => m.status === 'delivered');
      const store = app.rt.get(PLATFORM.EventStore);
      const outcomes = async (id: string) =>
        eventually(async () => {
          const evs = (await store.readStream(`message-${id}`))
            .filter((e) => e.type === 'MessageReceiptRecorded')
            .map((e) => (e.data as { outcome: string }).outcome);
          return evs.length >= 2 ? evs : undefined;
        }, 'receipts recorded');
      expect(await outcomes(late.id)).to.include('stale');
      expect(await eventually(async () => ((await outcomes(dup.id)).includes('duplicate') ? true : undefined), 'duplicate kept')).to.equal(
        true,
      );
    });

    it('reports read where the carrier does', async () => {
      const m = await outcome('+14155550120', (x) => x.status === 'read');
      expect(m.readAt).to.be.a('string');
    });

    it("sends once when the carrier's answer is lost after it sent (the submission is keyed by the message id)", async () => {
      const m = await outcome('+14155550129', (x) => x.status === 'delivered');
      const sent = await app.call('GET', `/sandbox/messages?to=${encodeURIComponent('+14155550129')}`, { key: ADMIN_TOKEN });
      expect(sent.body.data.filter((x: { idempotencyKey?: string; body?: string }) => JSON.stringify(x).includes(m.id))).to.have.length(1);
    });

    it('sends exactly once after a stop between the acceptance and the carrier submission', async () => {
      const sender = app.rt.workers.get('reactor:message_delivery')!;
      await sender.stop();
      const to = recipient();
      let r: Awaited<ReturnType<typeof send>>;
      try {
        r = await send(to, 'accepted while the sender is down');
        expect(r.status).to.equal(201);
        const sent = await app.call('GET', `/sandbox/messages?to=${encodeURIComponent(to)}`, { key: ADMIN_TOKEN });
        expect(sent.body.data).to.have.length(0);
      } finally {
        await sender.start();
      }
      await messageWhen(app, line.key, r.body.conversation_id, r.body.id, (m) => m.status === 'delivered', 'delivered after the restart');
      const sent = await app.call('GET', `/sandbox/messages?to=${encodeURIComponent(to)}`, { key: ADMIN_TOKEN });
      expect(sent.body.data).to.have.length(1);
    });

    it('fails a US send from an unregistered account with the 10DLC reason', async () => {
      const l = await messagingLine(app, { registered: false, name: 'Unregistered' });
      const r = await send(recipient(), 'hi', l);
      expect(r.status).to.equal(201);
      const m = await messageWhen(app, l.key, r.body.conversation_id, r.body.id, (x) => x.status === 'failed', 'failed');
      expect(m.failureReason).to.match(/^This number is not registered for US A2P 10DLC messaging\. Register at \S+ to send US SMS\.$/);
      expect(m).to.include({ failureCategory: 'configuration', retryable: false });
    });
  });

  describe('reactions', () => {
    it('shows a reaction sent and one received on the message; the received one goes to agent.reaction', async () => {
      const to = recipient();
      const m = await send(to, 'Dinner at 8?');
      const mine = await app.call('POST', `/v1/messages/${m.body.id}/reactions`, { key: line.key, body: { reaction: '👍' } });
      expect(mine.status, JSON.stringify(mine.body)).to.equal(200);
      expect(mine.body).to.include({ reaction_type: '👍', message_id: m.body.id });
      const theirs = await inbound(app, {
        from: to,
        to: line.phoneNumber,
        body: '',
        reaction: { reactionType: '❤️', messageId: m.body.id },
      });
      expect(theirs.status, JSON.stringify(theirs.body)).to.equal(201);
      const evt = await eventually(async () => events('agent.reaction').find((e) => e.data.messageId === m.body.id), 'agent.reaction');
      expect(evt.data).to.include({ reactionType: '❤️', fromNumber: to, direction: 'inbound', messageBody: 'Dinner at 8?' });
      const shown = await messageWhen(app, line.key, m.body.conversation_id, m.body.id, (x) => x.reactions.length === 2, 'two reactions');
      expect(shown.reactions.map((r: { direction: string }) => r.direction).sort()).to.deep.equal(['inbound', 'outbound']);
      const other = await app.newAccount('Other');
      expect(
        (await app.call('POST', `/v1/messages/${m.body.id}/reactions`, { key: other.apiKey, body: { reaction: 'x' } })).status,
      ).to.equal(404);
    });
  });

  describe('reading', () => {
    it("pages a conversation's messages and an agent's conversations; another account sees 404", async () => {
      const to = recipient();
      const first = await send(to, 'one');
      await inbound(app, { from: to, to: line.phoneNumber, body: 'two' });
      await send(to, 'three');
      const id = first.body.conversation_id;
      const page = await eventually(async () => {
        const r = await app.call('GET', `/v1/conversations/${id}/messages?limit=2`, { key: line.key });
        return r.body.data.length === 2 && r.body.hasMore ? r.body : undefined;
      }, 'a page of two');
      expect(page.data.map((m: { body: string }) => m.body)).to.deep.equal(['three', 'two']);
      const before = await app.call('GET', `/v1/conversations/${id}/messages?before=${encodeURIComponent(page.data[1].receivedAt)}`, {
        key: line.key,
      });
      expect(before.body.data.map((m: { body: string }) => m.body)).to.deep.equal(['one']);
      const agentConversations = await app.call('GET', `/v1/agents/${line.agentId}/conversations?limit=100`, { key: line.key });
      expect(agentConversations.body.data.map((c: { id: string }) => c.id)).to.include(id);
      expect(agentConversations.body.total).to.be.a('number');
      const other = await app.newAccount('Nosy');
      for (const path of [`/v1/conversations/${id}`, `/v1/conversations/${id}/messages`])
        expect((await app.call('GET', path, { key: other.apiKey })).status, path).to.equal(404);
      expect((await app.call('PATCH', `/v1/conversations/${id}`, { key: other.apiKey, body: { conversationState: {} } })).status).to.equal(
        404,
      );
      expect((await app.call('POST', `/v1/conversations/${id}/typing`, { key: line.key })).body).to.include({
        conversationId: id,
        status: 'unsupported',
      });
    });

    it('counts messages sent and received in the usage figures', async () => {
      const usage = await eventually(async () => {
        const r = await app.call('GET', '/v1/usage', { key: line.key });
        return r.body.stats.totalMessages > 10 ? r.body : undefined;
      }, 'usage counts messages');
      expect(usage.stats.totalMessages).to.equal(usage.stats.messagesSent + usage.stats.messagesReceived);
      expect(usage.stats.messagesReceived).to.be.greaterThan(3);
      expect(usage.stats.messageSegments).to.be.at.least(usage.stats.messagesSent);
    });

    it("keeps a released number's history", async () => {
      // an area code no other test buys from: with EventStoreDB the log outlives each test's sandbox inventory, so
      // a number sold again by a fresh inventory can still be active in an earlier test's replayed account
      const l = await messagingLine(app, { name: 'Released', areaCode: '808' });
      const to = recipient();
      await send(to, 'before release', l);
      const del = await app.call('DELETE', `/v1/numbers/${l.numberId}`, { key: l.key });
      expect(del.status).to.equal(200);
      const list = await app.call('GET', `/v1/numbers/${l.numberId}/messages`, { key: l.key });
      expect(list.body.data.map((m: { body: string }) => m.body)).to.include('before release');
      expect((await inbound(app, { from: to, to: l.phoneNumber, body: 'after release' })).status).to.equal(404);
    });
  });

  describe('rebuild (after everything above)', () => {
    it('replays the messaging read models from the log into equal tables', async () => {
      for (const p of [messagingProjector, analyticsMessagesProjector]) {
        const r = await rebuildProjector(app.rt.get(PLATFORM.ReadDb), app.rt.store, p, { checkOnly: true });
        expect(r.events, p.name).to.be.greaterThan(10);
        expect(r.equal, `${p.name}: ${JSON.stringify(r.differences)}`).to.equal(true);
      }
    });
  });
});

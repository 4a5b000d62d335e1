import { expect } from 'chai';
import { TestClock } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { FAST_MESSAGING_ENV, inbound, type Line, messageWhen, messagingLine, settings } from '../support/messaging.js';

const DAY = 86_400_000;
/** recipients that the sandbox carrier delivers */
let seq = 0;
const recipient = () => `+1312555${String(1000 + 10 * seq++)}`; // ends in 0: not a landline, not magic

/** A cap's message says how it clears once, not twice in other words (the fix is added at the edge: docs/compatibility.md). */
const expectSaidOnce = (message: string, words: RegExp) => expect(message.match(words) ?? [], message).to.have.length(1);

describe('messaging: sending, and the caps', function () {
  this.timeout(60_000);
  let app: TestApp;
  const clock = new TestClock(new Date('2026-05-04T10:00:00.000Z'));
  let line: Line;
  before(async () => {
    app = await startTestApp(FAST_MESSAGING_ENV, { clock });
    line = await messagingLine(app);
  });
  after(() => app.close());

  const send = (body: Record<string, unknown>, l = line, headers: Record<string, string> = {}) =>
    app.call('POST', '/v1/messages', { key: l.key, body: { agent_id: l.agentId, ...body }, headers });

  it("accepts a text with 201 from the agent's first number, and the carrier delivers it", async () => {
    const to = recipient();
    const r = await send({ to_number: to, body: 'Hello from the agent' });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body).to.include({
      status: 'accepted',
      channel: 'sms',
      from_number: line.phoneNumber,
      to_number: to,
      encoding: 'GSM-7',
      segments: 1,
    });
    expect(r.body.id).to.be.a('string');
    expect(r.body.conversation_id).to.be.a('string');
    const delivered = await messageWhen(app, line.key, r.body.conversation_id, r.body.id, (m) => m.status === 'delivered', 'delivered');
    expect(delivered).to.include({ direction: 'outbound', fromNumber: line.phoneNumber, toNumber: to, body: 'Hello from the agent' });
    expect(delivered.deliveredAt).to.be.a('string');
    const c = await app.call('GET', `/v1/conversations/${r.body.conversation_id}`, { key: line.key });
    expect(c.body).to.include({
      phoneNumberId: line.numberId,
      phoneNumber: line.phoneNumber,
      participant: to,
      messageCount: 1,
      agentId: line.agentId,
    });
    const numberMessages = await app.call('GET', `/v1/numbers/${line.numberId}/messages`, { key: line.key });
    expect(numberMessages.body.data.map((m: { id: string }) => m.id)).to.include(r.body.id);
    // the number's list items are the message record of a conversation, with the public list's names beside it
    const item = numberMessages.body.data.find((m: { id: string }) => m.id === r.body.id);
    const inConversation = (
      await app.call('GET', `/v1/conversations/${r.body.conversation_id}/messages`, { key: line.key })
    ).body.data.find((m: { id: string }) => m.id === r.body.id);
    expect(item).to.deep.include({ ...inConversation, status: item.status, deliveredAt: item.deliveredAt, readAt: item.readAt });
    expect(item).to.include({ fromNumber: line.phoneNumber, from_: line.phoneNumber, from: line.phoneNumber, toNumber: to, to });
    expect(item).to.include.keys('errorCode', 'deliveredAt', 'readAt', 'reactions', 'replyTo', 'senderIdentifier');
  });

  it('measures segments: GSM-7 160 per segment, 153 when split; one non-GSM character makes the whole text UCS-2', async () => {
    const gsm = await send({ to_number: recipient(), body: 'a'.repeat(161) });
    expect(gsm.body).to.include({ encoding: 'GSM-7', segments: 2 });
    const ucs = await send({ to_number: recipient(), body: `${'a'.repeat(70)}😀` });
    expect(ucs.body).to.include({ encoding: 'UCS-2', segments: 2 });
    const m = await messageWhen(app, line.key, ucs.body.conversation_id, ucs.body.id, () => true, 'listed');
    expect(m).to.include({ encoding: 'UCS-2', segments: 2 });
  });

  it('sends media as MMS', async () => {
    const r = await send({ to_number: recipient(), body: '', media_urls: ['https://example.com/a.png'] });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body).to.include({ channel: 'mms' });
    expect(r.body.media_urls).to.deep.equal(['https://example.com/a.png']);
  });

  describe('validation', () => {
    const refused = async (body: Record<string, unknown>, status: number, code: string, l = line) => {
      const r = await app.call('POST', '/v1/messages', { key: l.key, body });
      expect(r.status, JSON.stringify(r.body)).to.equal(status);
      expect(r.body.error.code).to.equal(code);
      return r;
    };
    it('needs a recipient, a body or media, E.164 numbers, and US or Canadian ones in a group', async () => {
      await refused({ agent_id: line.agentId, body: 'x' }, 422, 'VALIDATION_ERROR');
      await refused({ agent_id: line.agentId, to_number: recipient() }, 422, 'VALIDATION_ERROR');
      const bare = await refused({ agent_id: line.agentId, to_number: '4155550123', body: 'x' }, 422, 'VALIDATION_ERROR');
      expect(JSON.stringify(bare.body.error.details)).to.contain('to_number');
      const group = await refused(
        { agent_id: line.agentId, recipients: [recipient(), '+447700900123'], body: 'x' },
        422,
        'VALIDATION_ERROR',
      );
      expect(JSON.stringify(group.body.error.details)).to.contain('recipients');
      await refused({ agent_id: line.agentId, to_number: recipient(), body: 'x'.repeat(1601) }, 422, 'VALIDATION_ERROR');
    });
    it("takes a text to a number the carrier cannot reach, which fails with the carrier's reason", async () => {
      const cases = {
        '+447700900123': "Messaging to this destination country isn't enabled.",
        '+19995550100': "The recipient's number isn't valid or is disabled.",
      };
      for (const [to, reason] of Object.entries(cases)) {
        const r = await send({ to_number: to, body: 'Hello' });
        expect(r.status, JSON.stringify(r.body)).to.equal(201);
        const failed = await messageWhen(app, line.key, r.body.conversation_id, r.body.id, (m) => m.status === 'failed', `${to} failed`);
        expect(failed.failureReason).to.equal(reason);
      }
    });
    it("needs an agent or a number to send from, both the account's, the number the agent's", async () => {
      await refused({ to_number: recipient(), body: 'x' }, 422, 'VALIDATION_ERROR');
      await refused({ agent_id: 'agt_nope', to_number: recipient(), body: 'x' }, 404, 'AGENT_NOT_FOUND');
      await refused({ number_id: 'num_nope', to_number: recipient(), body: 'x' }, 404, 'PHONE_NUMBER_NOT_FOUND');
      const other = await app.newAccount('Other');
      const foreign = await app.call('POST', '/v1/messages', {
        key: other.apiKey,
        body: { number_id: line.numberId, to_number: recipient(), body: 'x' },
      });
      expect(foreign.status).to.equal(404);
      const otherAgent = await app.call('POST', '/v1/agents', { key: line.key, body: { name: 'Other agent' } });
      await refused({ agent_id: otherAgent.body.id, number_id: line.numberId, to_number: recipient(), body: 'x' }, 422, 'VALIDATION_ERROR');
      const byNumber = await app.call('POST', '/v1/messages', {
        key: line.key,
        body: { from_number: line.phoneNumber, to_number: recipient(), body: 'x' },
      });
      expect(byNumber.status, JSON.stringify(byNumber.body)).to.equal(201);
    });
  });

  describe('caps', () => {
    it('CONVERSATION_AWAITING_REPLY: three texts to a new recipient, then 429 until they reply', async () => {
      const to = recipient();
      for (let i = 0; i < 3; i++) expect((await send({ to_number: to, body: `m${i}` })).status).to.equal(201);
      const r = await send({ to_number: to, body: 'm3' });
      expect(r.status).to.equal(429);
      expect(r.body.error.code).to.equal('CONVERSATION_AWAITING_REPLY');
      expect(r.body.error.message).to.match(/recipient replies/);
      expectSaidOnce(r.body.error.message, /resume|unlock/gi);
      expect(r.headers.get('retry-after')).to.equal(null);
      const c = await app.call('GET', `/v1/conversations?limit=100`, { key: line.key });
      const conv = c.body.data.find((x: { participant: string }) => x.participant === to);
      const detail = await app.call('GET', `/v1/conversations/${conv.id}`, { key: line.key });
      expect(detail.body.capabilities).to.include({ canSendMessages: false });
      expect(detail.body.capabilities.sendDisabledReason).to.contain('CONVERSATION_AWAITING_REPLY');
      expect((await inbound(app, { from: to, to: line.phoneNumber, body: 'who is this?' })).status).to.equal(201);
      expect((await send({ to_number: to, body: 'm4' })).status).to.equal(201);
    });

    it('CONVERSATION_STREAK_LIMIT: at most the streak limit in a row after a reply; it resets only on a reply', async () => {
      const l = await messagingLine(app, { name: 'Streak' });
      await settings(app, l.accountId, { streakLimit: 2 });
      const to = recipient();
      await inbound(app, { from: to, to: l.phoneNumber, body: 'hi' });
      expect((await send({ to_number: to, body: 'a' }, l)).status).to.equal(201);
      expect((await send({ to_number: to, body: 'b' }, l)).status).to.equal(201);
      const r = await send({ to_number: to, body: 'c' }, l);
      expect([r.status, r.body.error?.code]).to.deep.equal([429, 'CONVERSATION_STREAK_LIMIT']);
      expectSaidOnce(r.body.error.message, /resume|unlock/gi);
      clock.advance(DAY); // time does not reset it
      expect((await send({ to_number: to, body: 'c' }, l)).body.error?.code).to.equal('CONVERSATION_STREAK_LIMIT');
      await inbound(app, { from: to, to: l.phoneNumber, body: 'ok' });
      expect((await send({ to_number: to, body: 'c' }, l)).status).to.equal(201);
    });

    it('CONVERSATION_INACTIVE: after over 14 quiet days one re-engagement text, then 429 until a reply', async () => {
      const l = await messagingLine(app, { name: 'Inactive' });
      const to = recipient();
      await inbound(app, { from: to, to: l.phoneNumber, body: 'hi' });
      expect((await send({ to_number: to, body: 'a' }, l)).status).to.equal(201);
      clock.advance(15 * DAY);
      expect((await send({ to_number: to, body: 'are you there?' }, l)).status).to.equal(201);
      const r = await send({ to_number: to, body: 'hello?' }, l);
      expect([r.status, r.body.error?.code]).to.deep.equal([429, 'CONVERSATION_INACTIVE']);
      expectSaidOnce(r.body.error.message, /resume|unlock/gi);
      await inbound(app, { from: to, to: l.phoneNumber, body: 'back' });
      expect((await send({ to_number: to, body: 'welcome back' }, l)).status).to.equal(201);
    });

    it('NEW_CONVERSATION_LIMIT_REACHED and OUTBOUND_LIMIT_REACHED: daily per number, cleared at midnight UTC', async () => {
      const l = await messagingLine(app, { name: 'Daily' });
      await settings(app, l.accountId, { dailyNewConversationLimit: 2, dailyOutboundLimit: 3 });
      expect((await send({ to_number: recipient(), body: 'a' }, l)).status).to.equal(201);
      const second = recipient();
      expect((await send({ to_number: second, body: 'b' }, l)).status).to.equal(201);
      const third = await send({ to_number: recipient(), body: 'c' }, l);
      expect([third.status, third.body.error?.code]).to.deep.equal([429, 'NEW_CONVERSATION_LIMIT_REACHED']);
      expect(third.body.error.message).to.contain('midnight UTC');
      expectSaidOnce(third.body.error.message, /midnight/gi);
      expect((await send({ to_number: second, body: 'again' }, l)).status, 'an existing conversation is not new').to.equal(201);
      // the next day: a conversation started yesterday still counts towards today's contacts who never wrote
      const now = clock.now();
      clock.set(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1, 0, 0, 1)).toISOString());
      await settings(app, l.accountId, { dailyNewConversationLimit: 10 });
      expect((await send({ to_number: second, body: 'day 2' }, l)).status).to.equal(201);
      expect((await send({ to_number: recipient(), body: 'd' }, l)).status).to.equal(201);
      expect((await send({ to_number: recipient(), body: 'e' }, l)).status).to.equal(201);
      const over = await send({ to_number: recipient(), body: 'f' }, l);
      expect([over.status, over.body.error?.code]).to.deep.equal([429, 'OUTBOUND_LIMIT_REACHED']);
      const replied = recipient();
      await inbound(app, { from: replied, to: l.phoneNumber, body: 'hi' });
      expect((await send({ to_number: replied, body: 'a contact who wrote is not capped' }, l)).status).to.equal(201);
    });

    it('INBOUND_ONLY: a flagged number cannot write first (422), but answers', async () => {
      const l = await messagingLine(app, { name: 'Inbound only' });
      await settings(app, l.accountId, { inboundOnlyNumberIds: [l.numberId] });
      const r = await send({ to_number: recipient(), body: 'hi' }, l);
      expect([r.status, r.body.error?.code]).to.deep.equal([422, 'INBOUND_ONLY']);
      const to = recipient();
      await inbound(app, { from: to, to: l.phoneNumber, body: 'hello' });
      expect((await send({ to_number: to, body: 'hi back' }, l)).status).to.equal(201);
    });

    it('holds under 20 concurrent sends to one new recipient: exactly three accepted', async () => {
      const to = recipient();
      const all = await Promise.all(Array.from({ length: 20 }, (_, i) => send({ to_number: to, body: `race ${i}` })));
      const statuses = all.map((r) => r.status).sort();
      expect(
        statuses.filter((s) => s === 201),
        JSON.stringify(all.filter((r) => r.status >= 500).map((r) => r.body)),
      ).to.have.length(3);
      expect(all.filter((r) => r.status === 429).every((r) => r.body.error.code === 'CONVERSATION_AWAITING_REPLY')).to.equal(true);
      expect(statuses.filter((s) => s !== 201 && s !== 429)).to.deep.equal([]);
    });

    it("writes a new recipient's daily slot and the send together: one transaction embedded, the slot first elsewhere", async () => {
      const to = recipient();
      const r = await send({ to_number: to, body: 'counted' });
      expect(r.status).to.equal(201);
      const day = clock.now().toISOString().slice(0, 10);
      const slot = (await app.rt.store.readStream(`number_day-${line.numberId}:${day}`)).filter(
        (e) => (e.data as { participant?: string }).participant === to,
      );
      const recorded = (await app.rt.store.readStream(`conversation-${r.body.conversation_id}`)).filter(
        (e) => (e.data as { messageId?: string }).messageId === r.body.id,
      );
      expect([slot.length, recorded.length]).to.deep.equal([1, 1]);
      if (app.rt.store.kind !== 'postgres') return; // EventStoreDB: no transactions across streams
      const [slotAt, recordedAt] = [slot[0]!, recorded[0]!].map((e) => e.checkpoint.split('/').map(BigInt)) as [bigint[], bigint[]];
      if (app.rt.store.soleWriter) expect(slotAt[0]).to.equal(recordedAt[0]);
      else expect([slotAt[0] === recordedAt[0], slotAt[1]! < recordedAt[1]!]).to.deep.equal([false, true]);
    });

    it('holds the daily new-conversation cap under 20 concurrent sends to 20 new recipients', async () => {
      const l = await messagingLine(app, { name: 'Daily race' });
      await settings(app, l.accountId, { dailyNewConversationLimit: 5 });
      const all = await Promise.all(Array.from({ length: 20 }, () => send({ to_number: recipient(), body: 'hi' }, l)));
      expect(all.filter((r) => r.status === 201)).to.have.length(5);
      expect(all.filter((r) => r.status === 429 && r.body.error.code === 'NEW_CONVERSATION_LIMIT_REACHED')).to.have.length(15);
    });
  });

  describe('Idempotency-Key', () => {
    it('answers a repeat with the first answer and sends nothing again; another body with the key is 422', async () => {
      const to = recipient();
      const key = `order-${Date.now()}`;
      const first = await send({ to_number: to, body: 'once' }, line, { 'Idempotency-Key': key });
      expect(first.status).to.equal(201);
      const again = await send({ to_number: to, body: 'once' }, line, { 'Idempotency-Key': key });
      expect(again.status).to.equal(201);
      expect(again.body).to.deep.equal(first.body);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      const other = await send({ to_number: to, body: 'twice' }, line, { 'Idempotency-Key': key });
      expect([other.status, other.body.error?.code]).to.deep.equal([422, 'IDEMPOTENCY_KEY_REUSED']);
      const c = await app.call('GET', `/v1/conversations/${first.body.conversation_id}`, { key: line.key });
      expect(c.body.messageCount).to.equal(1);
      const bad = await send({ to_number: to, body: 'once' }, line, { 'Idempotency-Key': 'x'.repeat(256) });
      expect(bad.status).to.equal(422);
    });
  });
});

// Its own server: starting one empties a server database, so it must not run inside the suite above.
describe('messaging: the send rate', function () {
  this.timeout(60_000);
  it("RATE_LIMITED: faster than the number's send rate, without Retry-After", async () => {
    const slow = await startTestApp(
      { ...FAST_MESSAGING_ENV, MESSAGE_SEND_RATE_PER_SECOND: '1', MESSAGE_SEND_BURST: '2' },
      { clock: new TestClock() },
    );
    try {
      const l = await messagingLine(slow, { name: 'Rate' });
      const r = await Promise.all(
        [1, 2, 3].map((i) =>
          slow.call('POST', '/v1/messages', { key: l.key, body: { agent_id: l.agentId, to_number: recipient(), body: `r${i}` } }),
        ),
      );
      const limited = r.filter((x) => x.status === 429);
      expect(limited).to.have.length(1);
      expect(limited[0]!.body.error.code).to.equal('RATE_LIMITED');
      expect(limited[0]!.headers.get('retry-after')).to.equal(null);
      expectSaidOnce(limited[0]!.body.error.message, /retry/gi);
    } finally {
      await slow.close();
    }
  });
});

import { expect } from 'chai';
import { type Kysely, sql } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { analyticsMessagesProjector, analyticsProjectors } from '../../projections/analytics/analytics.projectors.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { replayProjector } from '../../projections/shared/replay.js';
import { webhookNoticesProjector } from '../../projections/webhooks/webhook-notices.projector.js';
import { endedCall, FAR_END } from '../support/calls.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { FAST_MESSAGING_ENV, inbound } from '../support/messaging.js';
import { credit, eventually } from '../support/numbers.js';
import { projectorsCaughtUp } from '../support/projections.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/**
 * Usage and analytics against hand-counted fixtures (docs/analytics.md). Everything happens on two days of the
 * platform's clock, moved with the sandbox clock to the 10th and 11th of a month at 10:00 UTC, so that no day,
 * month or time-zone boundary falls inside the test.
 *
 * Day 1: number 1 (agent Alpha) sends 3 texts (one to a number that fails, transient) and receives 2; number 3
 *        (no agent) receives 1 and answers 1; Alpha places a call that completes and one that is busy; 2 numbers
 *        are looked up; 3 numbers are bought; a test send goes to the webhook.
 * Day 2: number 2 (agent Beta) receives 1 and answers 1; Beta is then deleted.
 * The master webhook receives agent.message: one delivery per inbound text (4), all delivered.
 */
describe('usage and analytics against hand-counted fixtures', function () {
  this.timeout(180_000);
  let app: TestApp;
  let rx: Receiver;
  let key: string;
  let accountId: string;
  let alpha: string;
  let beta: string;
  const n: { id: string; e164: string }[] = [];
  let day1: string;
  let day2: string;
  let callSeconds: number;
  let completedCallId: string;
  /** the first text of day 2 */
  let day2First: string;

  const send = async (body: Record<string, unknown>) => {
    const r = await app.call('POST', '/v1/messages', { key, body });
    if (r.status !== 201) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { id: string; conversation_id: string };
  };
  const get = async (path: string) => {
    const r = await app.call('GET', path, { key });
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  before(async () => {
    app = await startTestApp({
      ...FAST_MESSAGING_ENV,
      // the fixtures poll the API until every text is final; on a busy machine that outran 600 requests a minute
      THROTTLE_MAX_REQUESTS: '100000',
      SANDBOX_VOICE_WORDS_PER_MINUTE: '6000',
      SANDBOX_VOICE_RING_MS: '20',
      SANDBOX_VOICE_REPLY_PAUSE_MS: '100',
      WEBHOOK_POLL_INTERVAL_MS: '20',
      SANDBOX_CLOCK_REFRESH_MS: '50',
    });
    rx = await startReceiver();
    const now = new Date((await app.call('GET', '/sandbox/clock', { key: ADMIN_TOKEN })).body.now);
    const target = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 10, 10);
    await app.call('POST', '/sandbox/clock', { key: ADMIN_TOKEN, body: { advanceSeconds: Math.ceil((target - now.getTime()) / 1000) } });
    day1 = new Date(target).toISOString().slice(0, 10);
    day2 = new Date(target + 86_400_000).toISOString().slice(0, 10);

    ({ apiKey: key, accountId } = await app.newAccount('Counted'));
    await credit(app, accountId, 100_000_000);
    alpha = (await app.call('POST', '/v1/agents', { key, body: { name: 'Alpha', voiceMode: 'hosted', systemPrompt: 'Be brief.' } })).body
      .id;
    beta = (await app.call('POST', '/v1/agents', { key, body: { name: 'Beta' } })).body.id;
    for (const agentId of [alpha, beta, null]) {
      const r = await app.call('POST', '/v1/numbers', { key, body: { country: 'CA', ...(agentId ? { agentId } : {}) } });
      if (r.status !== 200) throw new Error(`number: ${r.status} ${JSON.stringify(r.body)}`);
      n.push({ id: r.body.id, e164: r.body.phoneNumber });
    }
    await app.call('POST', '/v1/webhooks', { key, body: { url: rx.url, events: ['agent.message'] } });

    // day 1
    await inbound(app, { from: '+13125550180', to: n[0]!.e164, body: 'one' });
    await inbound(app, { from: '+13125550181', to: n[0]!.e164, body: 'two' });
    await inbound(app, { from: '+13125550182', to: n[2]!.e164, body: 'three' });
    const outbound = [
      await send({ agent_id: alpha, to_number: '+13125550180', body: 'a' }),
      await send({ agent_id: alpha, to_number: '+13125550181', body: 'b' }),
      await send({ agent_id: alpha, to_number: '+12125550130', body: 'fails' }),
      await send({ number_id: n[2]!.id, to_number: '+13125550182', body: 'c' }),
    ];
    const lookup = await app.call('GET', '/v1/numbers/lookup?phoneNumbers=%2B14155550100,%2B14155550102', { key });
    expect(lookup.body.chargedNumbers).to.equal(2);
    expect((await app.call('POST', '/v1/webhooks/test', { key })).body.success).to.equal(true);
    const call = await app.call('POST', '/v1/calls', { key, body: { agentId: alpha, toNumber: FAR_END.talker } });
    const busy = await app.call('POST', '/v1/calls', { key, body: { agentId: alpha, toNumber: FAR_END.busy } });
    completedCallId = call.body.id;
    const ended = await endedCall(app, key, call.body.id, 60);
    expect(ended.status).to.equal('completed');
    callSeconds = ended.durationSeconds;
    expect((await endedCall(app, key, busy.body.id, 30)).status).to.equal('failed');
    // every outbound text has its final status
    await eventually(async () => {
      const statuses = await Promise.all(outbound.map(async (m) => (await get(`/v1/messages/${m.id}/history`)).status as string));
      return statuses.every((s) => ['delivered', 'failed', 'read'].includes(s)) || undefined;
    }, 'outbound texts final');

    // day 2
    await app.call('POST', '/sandbox/clock', { key: ADMIN_TOKEN, body: { advanceSeconds: 86_400 } });
    day2First = (await inbound(app, { from: '+13125550183', to: n[1]!.e164, body: 'four' })).body.messageId;
    const reply = await send({ agent_id: beta, to_number: '+13125550183', body: 'd' });
    await eventually(async () => (await get(`/v1/messages/${reply.id}/history`)).status === 'delivered' || undefined, 'reply delivered');
    expect((await app.call('DELETE', `/v1/agents/${beta}`, { key })).status).to.equal(200);
    await eventually(
      async () => (await get('/v1/webhooks/deliveries/all-time')).success === 4 || undefined,
      'four agent.message deliveries',
    );
    // the analytics read models lag a moment behind the log (docs/event-store.md#lagging-projectors)
    await projectorsCaughtUp(app);
  });
  after(async () => {
    await rx.close();
    await app.close();
  });

  const zero = {
    messages: 0,
    calls: 0,
    webhooks: 0,
    messagesSent: 0,
    messagesReceived: 0,
    segments: 0,
    callSeconds: 0,
    webhooksSucceeded: 0,
    webhooksFailed: 0,
    lookups: 0,
    spentMicros: 0,
    voiceMinutes: 0,
  };
  const day1Counts = () => ({
    messages: 7,
    calls: 1,
    webhooks: 3,
    messagesSent: 4,
    messagesReceived: 3,
    segments: 7,
    callSeconds,
    webhooksSucceeded: 3,
    webhooksFailed: 0,
    lookups: 2,
    spentMicros: 3 * 3_000_000 + 2 * 9_000,
    // the minutes public clients print, one decimal
    voiceMinutes: Math.round((callSeconds * 10) / 60) / 10,
  });
  const day2Counts = {
    messages: 2,
    calls: 0,
    webhooks: 1,
    messagesSent: 1,
    messagesReceived: 1,
    segments: 2,
    callSeconds: 0,
    webhooksSucceeded: 1,
    webhooksFailed: 0,
    lookups: 0,
    spentMicros: 0,
    voiceMinutes: 0,
  };

  it('GET /v1/usage/daily answers every day of the window, oldest first, with the counts of each', async () => {
    const day0 = new Date(Date.parse(day1) - 86_400_000).toISOString().slice(0, 10);
    expect(await get('/v1/usage/daily?days=3')).to.deep.equal({
      days: 3,
      data: [
        { date: day0, ...zero },
        { date: day1, ...day1Counts() },
        { date: day2, ...day2Counts },
      ],
    });
    const year = await get('/v1/usage/daily?days=365');
    expect(year.data).to.have.length(365);
    expect(year.data.at(-1).date).to.equal(day2);
    expect(await get('/v1/usage/daily')).to.include({ days: 30 });
    for (const bad of ['0', '366', 'x', '1.5'])
      expect((await app.call('GET', `/v1/usage/daily?days=${bad}`, { key })).status, bad).to.equal(422);
  });

  it('GET /v1/usage/monthly answers calendar months, this one last', async () => {
    const month = day1.slice(0, 7);
    const r = await get('/v1/usage/monthly?months=2');
    expect(r.months).to.equal(2);
    expect(r.data).to.have.length(2);
    expect(r.data[0]).to.deep.equal({
      month: new Date(Date.UTC(Number(day1.slice(0, 4)), Number(day1.slice(5, 7)) - 2, 1)).toISOString().slice(0, 7),
      ...zero,
    });
    const d1 = day1Counts();
    const both = Object.fromEntries(Object.keys(zero).map((k) => [k, (d1 as any)[k] + (day2Counts as any)[k]]));
    expect(r.data[1]).to.deep.equal({ month, ...both });
    expect((await get('/v1/usage/monthly')).data).to.have.length(6);
  });

  it('GET /v1/usage/by-number answers every number with its agent and counts', async () => {
    const r = await get('/v1/usage/by-number');
    const row = (id: string) => r.data.find((x: { numberId: string }) => x.numberId === id);
    expect(r.data).to.have.length(3);
    expect(row(n[0]!.id)).to.deep.equal({
      numberId: n[0]!.id,
      phoneNumber: n[0]!.e164,
      country: 'CA',
      status: 'active',
      agentId: alpha,
      agentName: 'Alpha',
      messages: 5,
      calls: 1,
      messagesSent: 3,
      messagesReceived: 2,
      callSeconds,
    });
    expect(row(n[1]!.id)).to.include({ messages: 2, calls: 0, agentId: null, agentName: null });
    expect(row(n[2]!.id)).to.include({ messages: 2, calls: 0, agentId: null });
  });

  it('GET /v1/usage/by-agent answers each agent, the deleted one as an orphan, and the Unassigned bucket', async () => {
    const r = await get('/v1/usage/by-agent?period=month');
    expect(r).to.include({ period: 'month', tz: 'UTC', periodStart: `${day1.slice(0, 7)}-01T00:00:00.000Z` });
    expect(r.data).to.deep.equal([
      { agentId: alpha, agentName: 'Alpha', messages: 5, calls: 1, totalSeconds: callSeconds, isOrphan: false },
      { agentId: beta, agentName: 'Beta', messages: 2, calls: 0, totalSeconds: 0, isOrphan: true },
      { agentId: null, agentName: 'Unassigned', messages: 2, calls: 0, totalSeconds: 0, isOrphan: false },
    ]);
    // the period is the time zone's own: in UTC+14 the month began at 10:00 UTC the day before the 1st
    const kiritimati = await get('/v1/usage/by-agent?period=month&tz=Pacific/Kiritimati');
    const first = Date.UTC(Number(day1.slice(0, 4)), Number(day1.slice(5, 7)) - 1, 1);
    expect(kiritimati.periodStart).to.equal(new Date(first - 14 * 3_600_000).toISOString());
    expect(kiritimati.tz).to.equal('Pacific/Kiritimati');
    const week = await get('/v1/usage/by-agent?period=week&tz=America/New_York');
    expect(new Date(week.periodStart).getUTCDay()).to.equal(1); // a Monday, at midnight in New York (04:00 or 05:00 UTC)
    expect([4, 5]).to.include(new Date(week.periodStart).getUTCHours());
    expect(Date.parse(week.periodEnd) - Date.parse(week.periodStart)).to.be.within(7 * 86_400_000 - 3_600_000, 7 * 86_400_000 + 3_600_000);
    expect((await get('/v1/usage/by-agent?period=year')).data[0]).to.include({ agentId: alpha, messages: 5 });
    expect((await app.call('GET', '/v1/usage/by-agent', { key })).status).to.equal(422);
    const badTz = await app.call('GET', '/v1/usage/by-agent?period=week&tz=Mars/Olympus', { key });
    expect(badTz.status).to.equal(422);
    expect(badTz.body.detail[0].loc).to.deep.equal(['query', 'tz']);
  });

  it('counts the same everywhere: GET /v1/usage, the daily sums and the delivery statistics agree (test sends left out)', async () => {
    const usage = await get('/v1/usage');
    expect(usage.stats).to.include({
      totalMessages: 9,
      messagesLast24h: 2,
      messagesLast7d: 9,
      messagesLast30d: 9,
      messagesSent: 5,
      messagesReceived: 4,
      totalCalls: 1,
      callsLast24h: 0,
      callsLast7d: 1,
      callSeconds,
      totalWebhookDeliveries: 4,
      successfulWebhookDeliveries: 4,
      failedWebhookDeliveries: 0,
      lookups: 2,
      spentMicros: 9_018_000,
    });
    const allTime = await get('/v1/webhooks/deliveries/all-time');
    expect(allTime).to.deep.equal({ total: 4, success: 4, failed: 0, successRate: 100 });
    const stats = await get('/v1/webhooks/deliveries/stats?hours=168');
    expect(stats).to.include({ total: 4, success: 4 });
    const daily = await get('/v1/usage/daily?days=30');
    const sum = (k: string) => daily.data.reduce((t: number, d: Record<string, number>) => t + d[k]!, 0);
    expect([sum('messages'), sum('calls'), sum('webhooks')]).to.deep.equal([
      usage.stats.totalMessages,
      usage.stats.totalCalls,
      usage.stats.totalWebhookDeliveries,
    ]);
    // the test send is in the log, and nowhere in the counts
    expect((await get('/v1/webhooks/deliveries')).items.filter((d: { test: boolean }) => d.test)).to.have.length(1);
  });

  it('GET /v1/analytics/messages answers the delivery rate and failures by category per number and day', async () => {
    const r = await get('/v1/analytics/messages?days=2');
    expect(r).to.include({ days: 2, from: day1, to: day2 });
    expect(r.data).to.deep.equal([
      ...[
        {
          date: day1,
          numberId: n[0]!.id,
          phoneNumber: n[0]!.e164,
          sent: 3,
          delivered: 2,
          failed: 1,
          pending: 0,
          failuresByCategory: { transient: 1 },
          deliveryRate: 66.7,
        },
        {
          date: day1,
          numberId: n[2]!.id,
          phoneNumber: n[2]!.e164,
          sent: 1,
          delivered: 1,
          failed: 0,
          pending: 0,
          failuresByCategory: {},
          deliveryRate: 100,
        },
      ].sort((a, b) => a.numberId.localeCompare(b.numberId)),
      {
        date: day2,
        numberId: n[1]!.id,
        phoneNumber: n[1]!.e164,
        sent: 1,
        delivered: 1,
        failed: 0,
        pending: 0,
        failuresByCategory: {},
        deliveryRate: 100,
      },
    ]);
  });

  it('GET /v1/analytics/webhooks answers the success rate and attempt latency percentiles per endpoint', async () => {
    const r = await get('/v1/analytics/webhooks?days=2');
    expect(r.data).to.have.length(1);
    const w = r.data[0];
    expect(w).to.include({
      url: rx.url,
      status: 'active',
      deliveries: 4,
      succeeded: 4,
      failed: 0,
      pending: 0,
      successRate: 100,
      attempts: 4,
      failedAttempts: 0,
    });
    const l = w.attemptLatencyMs;
    expect(l.p50).to.be.a('number');
    expect(l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.max).to.equal(true);
  });

  it('GET /v1/analytics/calls answers call outcomes and turn latency percentiles per agent', async () => {
    const r = await get('/v1/analytics/calls?days=2');
    expect(r.data).to.have.length(1);
    const a = r.data[0];
    expect(a).to.include({
      agentId: alpha,
      agentName: 'Alpha',
      isOrphan: false,
      placed: 2,
      completed: 1,
      failed: 1,
      inProgress: 0,
      callSeconds,
    });
    expect(a.outcomes).to.deep.equal({ user_hangup: 1, dial_busy: 1 });
    const call = await get(`/v1/calls/${completedCallId}`);
    const measured = call.turns.filter((t: { latency: unknown }) => t.latency !== null);
    expect(a.turns).to.equal(measured.length).and.be.greaterThan(0);
    const totals = measured
      .map(
        (t: { latency: { requestMs: number; firstByteMs: number; speechStartMs: number } }) =>
          t.latency.requestMs + t.latency.firstByteMs + t.latency.speechStartMs,
      )
      .sort((x: number, y: number) => x - y);
    // The calls read model rounds each of the three parts to a whole millisecond; analytics sums them
    // unrounded, so the two totals can differ by up to 1.5 ms (docs/analytics.md).
    expect(a.turnLatencyMs.total.max).to.be.closeTo(totals.at(-1), 1.5);
  });

  it('rebuilds every analytics projector into tables equal to the live ones', async () => {
    for (const p of [...analyticsProjectors, webhookNoticesProjector]) {
      const r = await rebuildProjector(app.rt.get(PLATFORM.ReadDb), app.rt.store, p, { checkOnly: true });
      expect(r.equal, `${p.name}: ${JSON.stringify(r.differences)}`).to.equal(true);
    }
  });

  it('replays a projector as it was at an instant into a scratch schema, leaving the live tables alone', async () => {
    const db = app.rt.get(PLATFORM.ReadDb);
    const live = async () =>
      Number(
        (
          await db
            .selectFrom('analytics_messages')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('account_id', '=', accountId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await live();
    // just before day 2's first event was recorded (the recording time: the platform's clock on the PostgreSQL store,
    // the server's on EventStoreDB)
    const firstOfDay2 = (await get(`/v1/messages/${day2First}/history`)).events[0].time as string;
    const until = new Date(Date.parse(firstOfDay2) - 1).toISOString();
    const r = await replayProjector(db, app.rt.store, analyticsMessagesProjector, { until });
    expect(r).to.include({ projector: 'analytics_messages_v1', schema: 'replay_analytics_messages_v1' });
    // the account's messages whose first fact was recorded by then, counted straight from the log (on EventStoreDB the
    // log is shared by the whole run: other tests' accounts are in it too)
    const created = await app.rt.store.readAll({
      filter: { eventTypes: ['OutboundMessageAccepted', 'InboundMessageReceived'] },
      maxCount: 1_000_000,
    });
    const byThen = new Set(
      created
        .filter((e) => e.metadata.accountId === accountId && Date.parse(e.createdAt) <= Date.parse(until))
        .map((e) => (e.data as { messageId: string }).messageId),
    );
    const replayed = await sql<{
      n: number;
    }>`select count(*)::int as n from replay_analytics_messages_v1.analytics_messages where account_id = ${accountId}`.execute(db);
    expect(replayed.rows[0]!.n).to.equal(byThen.size);
    // on the PostgreSQL store the recording time is the platform's (sandbox) clock, so that is day 1's seven; on
    // EventStoreDB it is the server's, where the days are seconds apart and asynchronous steps may interleave them
    if (!process.env.EVENTSTORE_URL) {
      expect(r.rows).to.deep.equal({ analytics_messages: 7 });
      expect(byThen.size).to.equal(7);
    }
    expect(r.skipped).to.be.greaterThan(0);
    expect(await live())
      .to.equal(before)
      .and.equal(9);
  });

  it('never counts a message of a channel that does not draw on credit (the chat-application channel)', async () => {
    const db = app.rt.get(PLATFORM.ReadDb) as Kysely<ReadDb>;
    const before = await get('/v1/usage/daily?days=1');
    const at = (await app.call('GET', '/sandbox/clock', { key: ADMIN_TOKEN })).body.now;
    const chatapp = {
      id: '00000000-0000-4000-8000-000000000001',
      type: 'OutboundMessageAccepted',
      data: {
        conversationId: 'conv_chatapp',
        messageId: 'msg_chatapp',
        body: 'hello from the chat app',
        mediaUrls: [],
        channel: 'chatapp',
        encoding: 'UCS-2',
        segments: 1,
        numberId: n[0]!.id,
        agentId: alpha,
        from: n[0]!.e164,
        to: '+13125550184',
        recipients: ['+13125550184'],
        replyToMessageId: null,
        sendStyle: null,
        kind: 'message',
        reengagement: false,
        acceptedAt: at,
      },
      metadata: { accountId, correlationId: 'c', causationId: null, requestId: null, actor: 'test' },
      streamName: 'conversation-conv_chatapp',
      streamRevision: 0n,
      globalPosition: 0n,
      checkpoint: '0/0',
      createdAt: at,
    } as unknown as RecordedEvent;
    await db.transaction().execute((trx) => analyticsMessagesProjector.apply(trx, chatapp));
    const row = await db.selectFrom('analytics_messages').selectAll().where('message_id', '=', 'msg_chatapp').executeTakeFirstOrThrow();
    expect(row).to.include({ channel: 'chatapp', counted: false });
    expect(await get('/v1/usage/daily?days=1')).to.deep.equal(before);
    expect((await get('/v1/usage')).stats.totalMessages).to.equal(9);
    await db.deleteFrom('analytics_messages').where('message_id', '=', 'msg_chatapp').execute();
  });
});

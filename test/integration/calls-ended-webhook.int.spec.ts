import { expect } from 'chai';
import { verifyWebhookSignature } from '../../infrastructure/webhooks/verify.js';
import { endedCall, FAR_END, FAST_VOICE_ENV, farEnd, placeCall, type VoiceLine, voiceLine } from '../support/calls.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { eventually, type Received, type Receiver, startReceiver } from '../support/webhook-receiver.js';

/** The public fields of `agent.call_ended` (docs/webhooks.md, the spec's section 6 and reference/compat-notes.md). */
const PUBLIC_FIELDS = [
  'callId',
  'numberId',
  'from',
  'to',
  'contact',
  'direction',
  'status',
  'startedAt',
  'endedAt',
  'durationSeconds',
  'disconnectionReason',
  'transcript',
  'summary',
  'userSentiment',
  'callSuccessful',
];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** `agent.call_ended` to the account's (master) webhook, docs/webhooks.md#the-delivery-contract. */
describe('calls: the agent.call_ended webhook', function () {
  this.timeout(90_000);
  let app: TestApp;
  let line: VoiceLine;
  let rx: Receiver;
  let secret: string;
  const GREETING = 'Hi, this is Ava from Acme.';

  before(async () => {
    app = await startTestApp({ ...FAST_VOICE_ENV, WEBHOOK_POLL_INTERVAL_MS: '50' });
    line = await voiceLine(app, { beginMessage: GREETING }, 'Ended webhook');
    // one receiver is the account's webhook: it answers voice turns with speech, and everything else with 200
    rx = await startReceiver((r) => {
      const body = JSON.parse(r.body);
      if (body.event === 'agent.message' && body.channel === 'voice')
        return {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: `Noted: ${body.data.transcript}` }),
        };
      return { status: 200, body: 'ok' };
    });
    const hook = await app.call('POST', '/v1/webhooks', { key: line.key, body: { url: rx.url, contextLimit: 1 } });
    expect(hook.status, JSON.stringify(hook.body)).to.equal(200);
    expect(hook.body.contextLimit).to.equal(1);
    secret = hook.body.secret;
  });
  after(async () => {
    await rx?.close();
    await app?.close();
  });

  const parsed = (r: Received) => JSON.parse(r.body);
  /** the agent.call_ended delivery of one call, once it has arrived */
  const endedHookOf = async (callId: string): Promise<Received> =>
    (await eventually(
      () => rx.received.find((r) => parsed(r).event === 'agent.call_ended' && parsed(r).data.callId === callId),
      20_000,
      `agent.call_ended of ${callId}`,
    ))!;

  const ring = async (from: string) => {
    const r = await app.call('POST', '/sandbox/calls/inbound', { key: ADMIN_TOKEN, body: { from, to: line.phoneNumber } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.callId as string;
  };
  /** waits until the far end has heard `n` agent playbacks to their end */
  const heardReplies = (callId: string, n: number) =>
    eventually(
      async () => {
        const v = await farEnd(app, callId);
        return v.agentSpeech.length === n && v.agentSpeech.every((x: { state: string }) => x.state === 'finished');
      },
      20_000,
      `${n} agent playbacks heard`,
    );
  /** a driven inbound caller (docs/sandbox.md#voice): hears the greeting, says each line after the previous reply, hangs up */
  async function conversation(from: string, lines: string[]): Promise<string> {
    const callId = await ring(from);
    await heardReplies(callId, 1);
    for (const [i, text] of lines.entries()) {
      const said = await app.call('POST', `/sandbox/calls/${callId}/say`, { key: ADMIN_TOKEN, body: { text } });
      expect(said.status).to.equal(200);
      await heardReplies(callId, i + 2);
    }
    // every reply is in the record before the caller hangs up
    await eventually(
      async () => (await app.call('GET', `/v1/calls/${callId}`, { key: line.key })).body.turns.length === 1 + 2 * lines.length,
      20_000,
      'the replies recorded',
    );
    expect((await app.call('POST', `/sandbox/calls/${callId}/hangup`, { key: ADMIN_TOKEN })).status).to.equal(200);
    return callId;
  }

  it('sends a completed call with every public field, the complete transcript in order (beyond contextLimit), signed', async () => {
    const caller = '+13125550188';
    // the caller is a contact of another account only: not this account's
    const other = await app.newAccount('Other');
    expect(
      (await app.call('POST', '/v1/contacts', { key: other.apiKey, body: { phoneNumber: caller, name: 'Not yours' } })).status,
    ).to.equal(201);
    const lines = ['I need to move my cleaning.', 'Is Thursday at ten free?', 'Great, book it please.'];
    const callId = await conversation(caller, lines);
    const c = await endedCall(app, line.key, callId, 30);
    expect(c.status).to.equal('completed');
    const delivery = await endedHookOf(callId);

    expect(verifyWebhookSignature(secret, delivery.headers, delivery.rawBody)).to.equal(true);
    expect(verifyWebhookSignature(`${secret}x`, delivery.headers, delivery.rawBody)).to.equal(false);
    expect(delivery.headers['x-webhook-id']).to.be.a('string').and.not.equal('');

    const body = parsed(delivery);
    expect(body).to.include({ event: 'agent.call_ended', channel: 'voice', agentId: line.agentId });
    expect(body.timestamp).to.match(ISO);
    const d = body.data;
    expect(d).to.include.all.keys(...PUBLIC_FIELDS);
    expect(d).to.include({
      callId,
      numberId: line.numberId,
      from: caller,
      to: line.phoneNumber,
      contact: null,
      direction: 'inbound',
      status: 'completed',
      disconnectionReason: 'user_hangup',
      durationSeconds: c.durationSeconds,
      endedAt: c.endedAt,
      summary: c.summary,
      userSentiment: c.userSentiment,
      callSuccessful: c.callSuccessful,
    });
    expect(d.startedAt).to.match(ISO);
    expect(Date.parse(d.startedAt)).to.be.at.least(Date.parse(c.startedAt)).and.at.most(Date.parse(d.endedAt));
    expect(d.summary).to.be.a('string').and.not.equal('');
    expect(d.userSentiment).to.be.a('string').and.not.equal('');
    expect(d.callSuccessful).to.be.a('boolean');

    // the whole conversation as heard, in order, whatever contextLimit (1) says
    expect(d.transcript).to.deep.equal([
      { role: 'agent', content: GREETING },
      ...lines.flatMap((l) => [
        { role: 'user', content: l },
        { role: 'agent', content: `Noted: ${l}` },
      ]),
    ]);
    const t = await app.call('GET', `/v1/calls/${callId}/transcript`, { key: line.key });
    expect(d.transcript).to.deep.equal(
      t.body.transcript.map((x: { role: string; content: string }) => ({ role: x.role, content: x.content })),
    );
    expect(body.recentHistory.length).to.be.at.most(1);

    // the voice turns of the same call went to the same webhook, their history cut to contextLimit
    const turns = rx.received.map(parsed).filter((b) => b.event === 'agent.message' && b.data.callId === callId);
    expect(turns.map((b) => b.data.transcript)).to.deep.equal(lines);
    for (const b of turns) expect(b.recentHistory.length).to.be.at.most(1);
    expect(turns[2].recentHistory.length).to.equal(1);
    // exactly one call_ended per call
    expect(rx.received.filter((r) => parsed(r).event === 'agent.call_ended' && parsed(r).data.callId === callId)).to.have.length(1);
  });

  it('sends an outbound call that completed, with the transcript of the record', async () => {
    const placed = await placeCall(app, line, { toNumber: FAR_END.talker });
    const c = await endedCall(app, line.key, placed.id, 30);
    expect(c.status).to.equal('completed');
    const delivery = await endedHookOf(placed.id);
    expect(verifyWebhookSignature(secret, delivery.headers, delivery.rawBody)).to.equal(true);
    const d = parsed(delivery).data;
    expect(d).to.include({
      callId: placed.id,
      numberId: line.numberId,
      from: line.phoneNumber,
      to: FAR_END.talker,
      contact: null,
      direction: 'outbound',
      status: 'completed',
      disconnectionReason: c.disconnectionReason,
      durationSeconds: c.durationSeconds,
    });
    const t = await app.call('GET', `/v1/calls/${placed.id}/transcript`, { key: line.key });
    expect(d.transcript).to.deep.equal(
      t.body.transcript.map((x: { role: string; content: string }) => ({ role: x.role, content: x.content })),
    );
    // the talker says at least its first line and its goodbye (docs/sandbox.md#voice)
    expect(d.transcript.length).to.be.greaterThan(3);
    expect(d.transcript.filter((x: { role: string }) => x.role === 'user').at(-1).content).to.equal('Thanks, bye!');
  });

  it('sends a recorded call once its recording is made, and answers it completed with its recordingUrl, never without', async () => {
    const recorded = await voiceLine(app, { beginMessage: GREETING }, 'Recorded calls');
    expect((await app.call('POST', '/v1/webhooks', { key: recorded.key, body: { url: rx.url } })).status).to.equal(200);
    expect((await app.call('POST', '/credits/recording/enable', { key: recorded.key })).status).to.equal(200);
    const placed = await placeCall(app, recorded, { toNumber: FAR_END.talker });
    // the long-poll answers the final record: completed, and the recording it keeps
    const waited = await app.call('GET', `/v1/calls/${placed.id}?wait=true&timeout=60`, { key: recorded.key });
    expect(waited.body).to.include({ status: 'completed', phase: 'ended', recordingAvailable: true });
    expect(waited.body.recordingUrl).to.match(new RegExp(`/v1/calls/${placed.id}/recording\\?expires=\\d+&signature=[0-9a-f]{64}$`));
    const delivery = await endedHookOf(placed.id);
    expect(parsed(delivery).data).to.include({ callId: placed.id, status: 'completed', recordingAvailable: true });
    expect(parsed(delivery).data.transcript.length).to.be.greaterThan(3);
    // one agent.call_ended, sent with the recording's fact (CallRecordingAvailable), not with the end
    expect(rx.received.filter((r) => parsed(r).event === 'agent.call_ended' && parsed(r).data.callId === placed.id)).to.have.length(1);
    const history = (await app.call('GET', `/v1/calls/${placed.id}/history`, { key: recorded.key })).body;
    const types = history.events.map((e: { type: string }) => e.type);
    expect(types.indexOf('CallRecordingAvailable')).to.be.greaterThan(types.indexOf('CallEnded'));
  });

  it('sends a call that never connected (busy) with status failed and an empty transcript', async () => {
    const placed = await placeCall(app, line, { toNumber: FAR_END.busy });
    const c = await endedCall(app, line.key, placed.id);
    expect(c.status).to.equal('failed');
    const delivery = await endedHookOf(placed.id);
    expect(verifyWebhookSignature(secret, delivery.headers, delivery.rawBody)).to.equal(true);
    const d = parsed(delivery).data;
    expect(d).to.include.all.keys(...PUBLIC_FIELDS);
    expect(d).to.include({
      callId: placed.id,
      numberId: line.numberId,
      from: line.phoneNumber,
      to: FAR_END.busy,
      direction: 'outbound',
      status: 'failed',
      disconnectionReason: 'dial_busy',
      durationSeconds: 0,
      callSuccessful: false,
      startedAt: c.startedAt,
      endedAt: c.endedAt,
    });
    expect(d.transcript).to.deep.equal([]);
    expect(d.summary).to.be.a('string').and.not.equal('');
  });

  it("fills contact with the account's contact of the caller (inbound) and of the callee (outbound)", async () => {
    const caller = '+13125550177';
    const mine = await app.call('POST', '/v1/contacts', {
      key: line.key,
      body: { phoneNumber: caller, name: 'Grace Hopper', email: 'grace@example.com' },
    });
    expect(mine.status, JSON.stringify(mine.body)).to.equal(201);
    const busy = await app.call('POST', '/v1/contacts', { key: line.key, body: { phoneNumber: FAR_END.busy, name: 'Busy Bee' } });
    expect(busy.status).to.equal(201);

    const inbound = await conversation(caller, ['Hello, it is Grace.']);
    await endedCall(app, line.key, inbound, 30);
    const d = parsed(await endedHookOf(inbound)).data;
    expect(d).to.include({ direction: 'inbound', from: caller });
    expect(d.contact).to.include({ id: mine.body.id, phoneNumber: caller, name: 'Grace Hopper', email: 'grace@example.com' });

    const outbound = await placeCall(app, line, { toNumber: FAR_END.busy });
    await endedCall(app, line.key, outbound.id);
    const o = parsed(await endedHookOf(outbound.id)).data;
    expect(o).to.include({ direction: 'outbound', to: FAR_END.busy, status: 'failed' });
    expect(o.contact).to.include({ id: busy.body.id, phoneNumber: FAR_END.busy, name: 'Busy Bee' });
  });
});

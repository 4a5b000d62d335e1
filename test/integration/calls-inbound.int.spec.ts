import { expect } from 'chai';
import { callStream } from '../../domain/call/call.js';
import { endedCall, FAST_VOICE_ENV, farEnd, type VoiceLine, type VoiceReceiver, voiceLine, voiceReceiver } from '../support/calls.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { eventually } from '../support/numbers.js';

/** A driven caller (no persona: it speaks only through the sandbox API), docs/sandbox.md#voice. */
const CALLER = '+13125550142';

describe('inbound calls (docs/sandbox.md#voice, docs/calls.md)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let line: VoiceLine;
  let rx: VoiceReceiver;
  const GREETING = 'Thanks for calling Acme Dental.';

  before(async () => {
    app = await startTestApp(FAST_VOICE_ENV);
    line = await voiceLine(app, { beginMessage: GREETING }, 'Inbound test');
    rx = await voiceReceiver((t) => ({ json: { text: `You said ${t.body.data.transcript}` } }));
    const hook = await app.call('POST', `/v1/agents/${line.agentId}/webhook`, { key: line.key, body: { url: rx.url } });
    expect(hook.status).to.equal(200);
  });
  after(async () => {
    await rx?.close();
    await app?.close();
  });

  const ring = (from: string, to: string) => app.call('POST', '/sandbox/calls/inbound', { key: ADMIN_TOKEN, body: { from, to } });
  const say = (callId: string, text: string) => app.call('POST', `/sandbox/calls/${callId}/say`, { key: ADMIN_TOKEN, body: { text } });
  const hangup = (callId: string) => app.call('POST', `/sandbox/calls/${callId}/hangup`, { key: ADMIN_TOKEN });
  /** the far end's view once `done` holds */
  const farEndWhen = (callId: string, done: (v: any) => boolean, what: string) =>
    eventually(async () => {
      const v = await farEnd(app, callId);
      return done(v) ? v : undefined;
    }, what);
  /** every call ever placed on a number, straight from the event log (not a read model that may lag) */
  const placedTo = async (phoneNumber: string) =>
    (await app.rt.store.readAll({ filter: { eventTypes: ['CallPlaced'] }, maxCount: 100_000 })).filter(
      (e) => (e.data as { to: string }).to === phoneNumber,
    );

  describe('to a number whose agent has a webhook', () => {
    let callId: string;

    it('answers, speaks the greeting, sends the caller turn to the webhook as inbound, speaks the reply and completes on hangup', async () => {
      const r = await ring(CALLER, line.phoneNumber);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.callId).to.match(/^call_/);
      expect(r.body.engineCallId).to.match(/^CA/);
      callId = r.body.callId;

      // the engine is answered before the read models show the call (docs/sandbox.md#voice): it shows moments later
      const live = await eventually(async () => {
        const c = await app.call('GET', `/v1/calls/${callId}`, { key: line.key });
        return c.status === 200 && c.body.status === 'in-progress' ? c : undefined;
      }, 'the call in progress in the read model');
      expect(live.body).to.include({
        direction: 'inbound',
        type: 'pstn',
        status: 'in-progress',
        agentId: line.agentId,
        phoneNumberId: line.numberId,
        phoneNumber: line.phoneNumber,
        fromNumber: CALLER,
        toNumber: line.phoneNumber,
        mode: 'webhook',
      });

      const greeted = await farEndWhen(callId, (v) => v.agentSpeech.some((s: any) => s.state === 'finished'), 'the greeting heard');
      expect(greeted).to.include({ direction: 'inbound', persona: 'driven', from: CALLER, to: line.phoneNumber, status: 'answered' });
      expect(greeted.agentSpeech.map((s: any) => [s.text, s.heard, s.state])).to.deep.equal([[GREETING, GREETING, 'finished']]);

      const before = rx.turns.length;
      expect((await say(callId, 'I would like to move my appointment.')).status).to.equal(200);
      const heard = await farEndWhen(
        callId,
        (v) => v.agentSpeech.length === 2 && v.agentSpeech[1].state === 'finished',
        'the reply heard by the caller',
      );
      expect(heard.agentSpeech[1]).to.include({
        text: 'You said I would like to move my appointment.',
        heard: 'You said I would like to move my appointment.',
      });
      expect(heard.farEndSpeech.map((s: any) => s.text)).to.deep.equal(['I would like to move my appointment.']);

      expect(rx.turns.length).to.equal(before + 1);
      const turn = rx.turns[before]!.body;
      expect(turn.event).to.equal('agent.message');
      expect(turn.channel).to.equal('voice');
      expect(turn.agentId).to.equal(line.agentId);
      expect(turn.data).to.include({
        callId,
        direction: 'inbound',
        from: CALLER,
        to: line.phoneNumber,
        numberId: line.numberId,
        transcript: 'I would like to move my appointment.',
        status: 'in-progress',
      });

      // the agent's reply is recorded before the caller hangs up: hang up only once it is in the record
      await eventually(async () => {
        const c = (await app.call('GET', `/v1/calls/${callId}`, { key: line.key })).body;
        return c.turns?.length === 3;
      }, 'the reply recorded');
      expect((await hangup(callId)).status).to.equal(200);
      const c = await endedCall(app, line.key, callId);
      expect(c).to.include({ status: 'completed', disconnectionReason: 'user_hangup', direction: 'inbound', answeredBy: 'human' });
      expect(c.turns.map((t: any) => [t.role, t.content])).to.deep.equal([
        ['agent', GREETING],
        ['user', 'I would like to move my appointment.'],
        ['agent', 'You said I would like to move my appointment.'],
      ]);
      expect(c.turns[0].source).to.equal('greeting');
      expect(c.turns[2]).to.include({ source: 'webhook', replyTo: c.turns[1].id });
      const after = await farEnd(app, callId);
      expect(after).to.include({ status: 'ended', endReason: 'remote_hangup' });
    });

    it("lists the call in the number's and the agent's calls", async () => {
      const ofNumber = await app.call('GET', `/v1/numbers/${line.numberId}/calls`, { key: line.key });
      expect(ofNumber.status).to.equal(200);
      expect(ofNumber.body.data.map((c: any) => c.id)).to.include(callId);
      expect(ofNumber.body.data.find((c: any) => c.id === callId)).to.include({
        direction: 'inbound',
        status: 'completed',
        fromNumber: CALLER,
        toNumber: line.phoneNumber,
      });
      const ofAgent = await app.call('GET', `/v1/agents/${line.agentId}/calls`, { key: line.key });
      expect(ofAgent.status).to.equal(200);
      expect(ofAgent.body.data.map((c: any) => c.id)).to.include(callId);
      const inbound = await app.call('GET', '/v1/calls?direction=inbound', { key: line.key });
      expect(inbound.body.data.map((c: any) => c.id)).to.deep.equal([callId]);
    });

    it('refuses say and hangup on the ended call (409 SANDBOX_CALL_NOT_CONNECTED)', async () => {
      const r = await say(callId, 'Hello?');
      expect(r.status).to.equal(409);
      expect(r.body.error.code).to.equal('SANDBOX_CALL_NOT_CONNECTED');
      expect((await hangup(callId)).status).to.equal(409);
    });

    it('answers the far end’s view once the agent has made N playbacks and is quiet (agentQuietAfter), or at the timeout', async () => {
      const r = await ring('+13125550143', line.phoneNumber);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const id = r.body.callId as string;
      // a generous timeout: on a busy machine the reply may take seconds; the test waits only as long as it takes
      const quiet = (n: number | string, timeout = 30) =>
        app.call('GET', `/sandbox/calls/${id}?agentQuietAfter=${n}&timeout=${timeout}`, { key: ADMIN_TOKEN });
      const greeted = await quiet(1);
      expect(greeted.status).to.equal(200);
      expect(greeted.body.agentSpeech.map((s: any) => [s.text, s.state])).to.deep.equal([[GREETING, 'finished']]);
      expect((await say(id, 'Is the clinic open on Saturday?')).status).to.equal(200);
      // asked at once: the reply is still to be sent by the webhook and spoken
      const replied = await quiet(2);
      expect(replied.body.agentSpeech.map((s: any) => [s.heard, s.state])).to.deep.equal([
        [GREETING, 'finished'],
        ['You said Is the clinic open on Saturday?', 'finished'],
      ]);
      // a third playback never comes: answered at the timeout, as the call is
      const started = Date.now();
      const waited = await quiet(3, 1);
      expect(waited.status).to.equal(200);
      expect(waited.body.agentSpeech).to.have.length(2);
      expect(Date.now() - started).to.be.at.least(900);
      expect((await quiet(-1)).status).to.equal(422);
      expect((await hangup(id)).status).to.equal(200);
      // an ended call is over: answered at once
      expect((await quiet(3)).body).to.include({ status: 'ended' });
    });
  });

  describe('refusals', () => {
    it('refuses a call to a number that no agent answers (409) and records nothing', async () => {
      const n = await app.call('POST', '/v1/numbers', { key: line.key, body: { country: 'US' } });
      expect(n.status).to.equal(200);
      expect(n.body.agentId ?? null).to.equal(null);
      const r = await ring(CALLER, n.body.phoneNumber);
      expect(r.status).to.equal(409);
      expect(r.body.error.code).to.equal('SANDBOX_CALL_REFUSED');
      expect(r.body.error.message).to.contain('no agent answers');
      expect(await placedTo(n.body.phoneNumber)).to.deep.equal([]);
      expect((await app.call('GET', `/v1/numbers/${n.body.id}/calls`, { key: line.key })).body.data).to.deep.equal([]);
    });

    it('refuses a call to a number once its agent was detached, and records nothing', async () => {
      const n = await app.call('POST', '/v1/numbers', { key: line.key, body: { country: 'US', agentId: line.agentId } });
      expect(n.status).to.equal(200);
      const detached = await app.call('DELETE', `/v1/agents/${line.agentId}/numbers/${n.body.id}`, { key: line.key });
      expect(detached.status, JSON.stringify(detached.body)).to.equal(200);
      const r = await ring(CALLER, n.body.phoneNumber);
      expect(r.status).to.equal(409);
      expect(r.body.error.code).to.equal('SANDBOX_CALL_REFUSED');
      expect(await placedTo(n.body.phoneNumber)).to.deep.equal([]);
    });

    it('refuses a call to a number that is not the platform’s (409)', async () => {
      const r = await ring(CALLER, '+13125550999');
      expect(r.status).to.equal(409);
      expect(r.body.error.code).to.equal('SANDBOX_CALL_REFUSED');
      expect(r.body.error.message).to.contain('+13125550999');
      expect(await placedTo('+13125550999')).to.deep.equal([]);
    });
  });

  describe('to a number routed to a SIP trunk (docs/numbers.md#sip-trunks)', () => {
    /** when the far end's first failed bridge attempt was recorded (the answer can only come after it) */
    const view0 = (v: any) => Date.parse(v.bridgeAttempts[0].at);
    /** a number of the account with no agent, routed to a new trunk with these origination URIs */
    async function routedNumber(uris: { sip_uri: string; priority?: number; weight?: number }[], key = line.key) {
      const t = await app.call('POST', '/v1/sip-trunks', { key, body: { name: 'PBX', origination: { uris } } });
      expect(t.status, JSON.stringify(t.body)).to.equal(200);
      const n = await app.call('POST', '/v1/numbers', { key, body: { country: 'US' } });
      expect(n.status).to.equal(200);
      const routed = await app.call('PATCH', `/v1/numbers/${n.body.id}`, { key, body: { sipTrunkId: t.body.id } });
      expect(routed.status, JSON.stringify(routed.body)).to.equal(200);
      return { numberId: n.body.id as string, phoneNumber: n.body.phoneNumber as string, trunkId: t.body.id as string };
    }

    it('bridges to the lowest priority first, fails over past a failing URI, and records which URI answered', async () => {
      // listed out of order: the priority decides, not the list
      const n = await routedNumber([
        { sip_uri: 'sip:backup@pbx2.example.com', priority: 30 },
        { sip_uri: 'sip:front@fail-pbx.example.com', priority: 1 },
        { sip_uri: 'sip:desk@pbx.example.com', priority: 20 },
      ]);
      const r = await ring(CALLER, n.phoneNumber);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const { callId } = r.body;
      const c = await eventually(async () => {
        const got = (await app.call('GET', `/v1/calls/${callId}`, { key: line.key })).body;
        return got.sipUri ? got : undefined;
      }, 'the bridge recorded');
      expect(c).to.include({
        mode: 'sip',
        direction: 'inbound',
        status: 'in-progress',
        sipUri: 'sip:desk@pbx.example.com',
        sipTrunkId: n.trunkId,
      });
      expect(c.agentId).to.equal(null);
      // the caller was answered when the URI answered, not before (docs/calls.md#sip-trunks)
      const answered = (await app.rt.store.readStream(callStream(callId))).find((e) => e.type === 'CallAnswered');
      const failedOver = view0(await farEnd(app, callId));
      expect(answered, 'the call was answered').to.not.equal(undefined);
      expect(Date.parse((answered!.data as { at: string }).at)).to.be.at.least(failedOver);
      expect(c.sipFailures).to.deep.equal([{ sipUri: 'sip:front@fail-pbx.example.com', error: 'SIP 503 Service Unavailable' }]);
      const view = await farEnd(app, callId);
      expect(view.bridgedTo).to.equal('sip:desk@pbx.example.com');
      expect(view.bridgeAttempts.map((a: any) => [a.sipUri, a.outcome])).to.deep.equal([
        ['sip:front@fail-pbx.example.com', 'SIP 503 Service Unavailable'],
        ['sip:desk@pbx.example.com', 'answered'],
      ]);
      // a bridged call is between the caller and the PBX: the agent says nothing
      expect(view.agentSpeech).to.deep.equal([]);
      const bridged = (await app.rt.store.readStream(callStream(callId))).filter((e) => e.type === 'CallBridged');
      expect(bridged.map((e) => (e.data as { sipUri: string }).sipUri)).to.deep.equal(['sip:desk@pbx.example.com']);

      expect((await hangup(callId)).status).to.equal(200);
      const ended = await endedCall(app, line.key, callId);
      expect(ended).to.include({ status: 'completed', disconnectionReason: 'user_hangup', sipUri: 'sip:desk@pbx.example.com' });
      expect((await app.call('GET', `/v1/numbers/${n.numberId}/calls`, { key: line.key })).body.data.map((x: any) => x.id)).to.deep.equal([
        callId,
      ]);
    });

    it('ends the call sip_unreachable when every URI fails, naming each failure', async () => {
      const n = await routedNumber([
        { sip_uri: 'sip:a@fail1.example.com', priority: 1 },
        { sip_uri: 'sip:b@unreachable.example.com', priority: 2 },
      ]);
      const r = await ring(CALLER, n.phoneNumber);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const c = await endedCall(app, line.key, r.body.callId);
      // never answered: the call failed (docs/calls.md#sip-trunks)
      expect(c).to.include({ status: 'failed', disconnectionReason: 'sip_unreachable', sipUri: null, answeredAt: null });
      expect(c.disconnectionDetail).to.contain('sip:a@fail1.example.com: SIP 503 Service Unavailable');
      expect(c.disconnectionDetail).to.contain('sip:b@unreachable.example.com: SIP 408 Request Timeout');
      const view = await farEnd(app, r.body.callId);
      expect(view.bridgedTo).to.equal(null);
      expect(view.bridgeAttempts.map((a: any) => a.sipUri)).to.deep.equal(['sip:a@fail1.example.com', 'sip:b@unreachable.example.com']);
      expect(view).to.include({ status: 'ended', endReason: 'local_hangup' });
      expect(c.sipFailures).to.deep.equal([
        { sipUri: 'sip:a@fail1.example.com', error: 'SIP 503 Service Unavailable' },
        { sipUri: 'sip:b@unreachable.example.com', error: 'SIP 408 Request Timeout' },
      ]);
    });

    it('ends the call busy when a URI answers 486, without trying the next one (docs/calls.md#sip-trunks)', async () => {
      const n = await routedNumber([
        { sip_uri: 'sip:a@fail2.example.com', priority: 1 },
        { sip_uri: 'sip:desk@busy.pbx.example.com', priority: 2 },
        { sip_uri: 'sip:never@pbx.example.com', priority: 3 },
      ]);
      const r = await ring(CALLER, n.phoneNumber);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const c = await endedCall(app, line.key, r.body.callId);
      expect(c).to.include({ status: 'failed', disconnectionReason: 'dial_busy', sipUri: null, answeredAt: null });
      expect(c.disconnectionDetail).to.contain('sip:desk@busy.pbx.example.com is busy (SIP 486 Busy Here)');
      expect(c.sipFailures.map((f: any) => f.sipUri)).to.deep.equal(['sip:a@fail2.example.com', 'sip:desk@busy.pbx.example.com']);
      const view = await farEnd(app, r.body.callId);
      expect(view.bridgeAttempts.map((a: any) => a.sipUri)).to.deep.equal(['sip:a@fail2.example.com', 'sip:desk@busy.pbx.example.com']);
    });

    it('a bridged call counts in usage as a call of its seconds; one that no URI took counts nothing and costs nothing (docs/analytics.md)', async () => {
      const acc = await voiceLine(app, {}, 'Bridged usage');
      const usage = async () => (await app.call('GET', '/v1/usage', { key: acc.key })).body;
      const before = await usage();
      expect(before.stats).to.include({ totalCalls: 0, callSeconds: 0 });
      const taken = await routedNumber([{ sip_uri: 'sip:desk@pbx.example.com' }], acc.key);
      const refused = await routedNumber([{ sip_uri: 'sip:a@fail3.example.com' }], acc.key);
      // the balance as the ledger keeps it (the analytics' spentMicros lags a moment behind, docs/analytics.md)
      const balance = (await usage()).balance.micros;
      const r1 = await ring(CALLER, taken.phoneNumber);
      const r2 = await ring(CALLER, refused.phoneNumber);
      await farEndWhen(r1.body.callId, (v) => v.bridgedTo !== null, 'the bridge answered');
      expect((await hangup(r1.body.callId)).status).to.equal(200);
      const connected = await endedCall(app, acc.key, r1.body.callId);
      expect(connected).to.include({ status: 'completed', sipTrunkId: taken.trunkId });
      expect((await endedCall(app, acc.key, r2.body.callId)).status).to.equal('failed');
      const after = await eventually(async () => {
        const u = await usage();
        return u.stats.totalCalls === 1 ? u : undefined;
      }, 'the bridged call counted in usage');
      expect(after.stats.callSeconds).to.equal(connected.durationSeconds);
      // calls carry no per-minute charge: the balance moved only by the numbers bought before the calls
      expect(after.balance.micros).to.equal(balance);
      const byNumber = (await app.call('GET', '/v1/usage/by-number', { key: acc.key })).body.data;
      expect(byNumber.find((x: any) => x.numberId === taken.numberId)).to.include({ calls: 1 });
      expect(byNumber.find((x: any) => x.numberId === refused.numberId)).to.include({ calls: 0 });
    });
  });
});

import { expect } from 'chai';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { callsProjector } from '../../projections/calls/calls.projector.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { callWhen, endedCall, FAST_VOICE_ENV, type VoiceReceiver, voiceReceiver } from '../support/calls.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { eventually } from '../support/numbers.js';
import { joinWebCall, PageSocket, silence, socketUrl, spoken } from '../support/web-calls.js';

const agentTurns = (c: any) => c.turns.filter((t: any) => t.role === 'agent');
const callerTurns = (c: any) => c.turns.filter((t: any) => t.role === 'user');
/** how long a step that recognises or renders speech may take on a busy machine */
const SLOW = 90_000;
const isVoiceTurn = (t: { body: any }) => t.body.event === 'agent.message' && t.body.channel === 'voice';

/**
 * Web calls over the socket (docs/calls.md#web-calls): joining with the access token, typed and spoken turns
 * through the webhook, the reply's audio, barge-in, the end, and the refusals. Speech is real: espeak-ng renders
 * what the caller says and the agent's replies, pocketsphinx recognises the caller.
 */
describe('web calls over the socket', function () {
  this.timeout(180_000);
  let app: TestApp;
  let rx: VoiceReceiver;

  before(async () => {
    app = await startTestApp({ ...FAST_VOICE_ENV, WEB_CALL_END_SILENCE_MS: '500' });
    rx = await voiceReceiver((t) => (isVoiceTurn(t) ? { json: { text: `You said: ${t.body.data.transcript}` } } : { json: {} }));
  });
  after(async () => {
    await rx?.close();
    await app?.close();
  });

  /** An account and an agent with its webhook: a web call needs no phone number. */
  async function line(agent: Record<string, unknown> = {}): Promise<{ key: string; agentId: string }> {
    const { apiKey: key } = await app.newAccount('Web call test');
    const a = await app.call('POST', '/v1/agents', { key, body: { name: 'Web agent', ...agent } });
    expect(a.status).to.equal(200);
    const h = await app.call('POST', `/v1/agents/${a.body.id}/webhook`, { key, body: { url: rx.url, timeout: 10 } });
    expect(h.status).to.equal(200);
    return { key, agentId: a.body.id };
  }

  const turnsOf = (callId: string) => rx.turns.filter((t) => t.body.data?.callId === callId);

  it('a typed turn reaches the webhook, the reply comes back as speech, and the caller hangs up', async () => {
    const l = await line({ beginMessage: 'Hello from the web.' });
    const { page, callId } = await joinWebCall(app, l.key, l.agentId);
    expect(page.messages[0]).to.include({ type: 'joined', callId, sampleRate: 16000, encoding: 'pcm_s16le', frameMs: 20 });
    // the greeting is spoken first
    const greeting = await page.message((m) => m.type === 'speech' && m.text === 'Hello from the web.', 'the greeting');
    await page.message((m) => m.type === 'speech_end' && m.id === greeting.id, 'the greeting has been said');
    page.sendJson({ type: 'text', text: 'Do you open on Sunday?' });
    const hook = await eventually(async () => turnsOf(callId).find(isVoiceTurn), 'the typed turn reached the webhook', SLOW);
    expect(hook.body.data).to.include({
      transcript: 'Do you open on Sunday?',
      confidence: 1,
      direction: 'web',
      from: 'web',
      to: l.agentId,
    });
    await page.message((m) => m.type === 'speech' && m.text === 'You said: Do you open on Sunday?', 'the reply');
    // the reply's audio: 16-bit samples at 16 kHz, in frames of at most 20 ms
    await eventually(async () => page.audioBytes > 16_000 * 2 * 1, 'a second of audio', SLOW);
    expect(page.audioBytes % 2).to.equal(0);
    const live = await callWhen(app, l.key, callId, (c) => agentTurns(c).length === 2, 'the reply recorded');
    expect(live).to.include({ status: 'in-progress', direction: 'web', type: 'web' });
    page.sendJson({ type: 'hangup' });
    const closed = await page.closed;
    expect(closed.code).to.equal(1000);
    expect(page.messages.at(-1)).to.deep.equal({ type: 'ended', by: 'caller' });
    const c = await endedCall(app, l.key, callId, 60);
    expect(c).to.include({ status: 'completed', disconnectionReason: 'user_hangup', answeredBy: 'human' });
    const reply = agentTurns(c)[1];
    expect(reply).to.include({ source: 'webhook', text: 'You said: Do you open on Sunday?', interrupted: false });
    // typed: nothing to recognise; the reply was rendered by the speech engine
    expect(reply.latency.recognitionMs).to.equal(null);
    expect(reply.latency.synthesisMs).to.be.a('number');
    expect(reply.latency.requestMs).to.be.a('number');
    expect(callerTurns(c)[0]).to.include({ content: 'Do you open on Sunday?', confidence: 1 });
    const t = await app.call('GET', `/v1/calls/${callId}/transcript`, { key: l.key });
    expect(t.body.transcript.map((e: any) => [e.role, e.content])).to.deep.equal([
      ['agent', 'Hello from the web.'],
      ['user', 'Do you open on Sunday?'],
      ['agent', 'You said: Do you open on Sunday?'],
    ]);
    const ended = await eventually(async () => turnsOf(callId).find((x) => x.body.event === 'agent.call_ended'), 'agent.call_ended', SLOW);
    expect(ended.body.data).to.include({ callId, direction: 'web', status: 'completed', disconnectionReason: 'user_hangup' });
    expect(ended.body.data.transcript).to.have.length(3);
  });

  it('a spoken turn is recognised on the server (pocketsphinx) and timed', async () => {
    const l = await line();
    const { page, callId } = await joinWebCall(app, l.key, l.agentId);
    page.sendAudio(silence(300));
    page.sendAudio(await spoken('What are your opening hours on Saturday?'));
    page.sendAudio(silence(800));
    await page.message((m) => m.type === 'listening', 'speech detected');
    const heard = await page.message((m) => m.type === 'transcript', 'the recognised words');
    const hook = await eventually(async () => turnsOf(callId).find(isVoiceTurn), 'the spoken turn reached the webhook', SLOW);
    expect(hook.body.data.transcript).to.equal(heard.text);
    // pocketsphinx's accuracy is modest: the key words, not the sentence
    expect(heard.text).to.match(/opening|saturday/);
    expect(hook.body.data.confidence).to.be.within(0, 1);
    await page.message((m) => m.type === 'speech', 'the reply');
    page.close();
    const c = await endedCall(app, l.key, callId, 60);
    expect(c.disconnectionReason).to.equal('user_hangup');
    const reply = agentTurns(c).find((t: any) => t.source === 'webhook');
    expect(reply.latency.recognitionMs).to.be.a('number').and.at.least(0);
    expect(reply.latency.synthesisMs).to.be.a('number');
  });

  it('speech over the agent cuts it (barge-in): the page is told to drop the audio, the turn keeps what was heard', async () => {
    const greeting =
      'Hello and welcome to the Acme help line, where we answer questions about orders, deliveries, returns and opening hours every day.';
    const l = await line({ beginMessage: greeting, interruptionSensitivity: 1 });
    const { page, callId } = await joinWebCall(app, l.key, l.agentId);
    page.sendAudio(silence(400)); // the microphone streams from the start
    await page.message((m) => m.type === 'speech', 'the greeting starts');
    // a second into the greeting, the caller talks over it
    await eventually(async () => page.audioBytes > 32_000 * 1.2, 'a second of the greeting', SLOW);
    page.sendAudio(await spoken('Sorry, can I ask something?'));
    page.sendAudio(silence(800));
    await page.message((m) => m.type === 'clear', 'the page is told to drop the greeting');
    await eventually(async () => turnsOf(callId).find(isVoiceTurn), 'the interruption reached the webhook', SLOW);
    const c = await callWhen(app, l.key, callId, (x) => agentTurns(x).length >= 2, 'the turns recorded');
    const g = agentTurns(c)[0];
    expect(g).to.include({ source: 'greeting', interrupted: true, text: greeting });
    const heardWords = g.spoken.split(' ').filter(Boolean).length;
    expect(heardWords).to.be.greaterThan(0).and.lessThan(greeting.split(' ').length);
    expect(greeting.startsWith(g.spoken)).to.equal(true);
    page.close();
    await endedCall(app, l.key, callId, 60);
  });

  it('the agent hangs up (end_call) and a transfer is refused on a web call', async () => {
    const l = await line({ transferNumber: '+14155550100' });
    rx.answer((t) =>
      !isVoiceTurn(t)
        ? { json: {} }
        : t.body.data.transcript === 'transfer me'
          ? { json: { text: 'Transferring.', action: 'transfer' } }
          : { json: { text: 'Goodbye.', action: 'end_call' } },
    );
    try {
      const { page, callId } = await joinWebCall(app, l.key, l.agentId);
      page.sendJson({ type: 'text', text: 'transfer me' });
      await callWhen(app, l.key, callId, (c) => agentTurns(c).length >= 1, 'the transfer turn');
      page.sendJson({ type: 'text', text: 'bye' });
      const closed = await page.closed;
      expect(closed.code).to.equal(1000);
      expect(page.messages.at(-1)).to.deep.equal({ type: 'ended', by: 'agent' });
      const c = await endedCall(app, l.key, callId, 60);
      expect(c.disconnectionReason).to.equal('agent_hangup');
      expect(agentTurns(c)[0].actions[0]).to.include({ type: 'transfer', outcome: 'refused' });
      expect(agentTurns(c)[0].actions[0].detail).to.match(/web call cannot be transferred/);
    } finally {
      rx.answer((t) => (isVoiceTurn(t) ? { json: { text: `You said: ${t.body.data.transcript}` } } : { json: {} }));
    }
  });

  describe('the access token', () => {
    async function refusal(token: string) {
      const page = new PageSocket(socketUrl(app));
      await page.opened();
      page.sendJson({ type: 'join', accessToken: token });
      const closed = await page.closed;
      return { closed, error: page.messages.find((m) => m.type === 'error') };
    }

    it('joins once: a reused token is refused (4401) and the first page keeps the call', async () => {
      const l = await line();
      const r = await app.call('POST', '/v1/calls/web', { key: l.key, body: { agentId: l.agentId } });
      const first = new PageSocket(socketUrl(app));
      await first.opened();
      first.sendJson({ type: 'join', accessToken: r.body.accessToken });
      await first.message((m) => m.type === 'joined', 'the first join');
      const again = await refusal(r.body.accessToken);
      expect(again.closed.code).to.equal(4401);
      expect(again.error).to.include({ code: 'WEB_CALL_TOKEN_INVALID' });
      expect(again.error.message).to.match(/already been used/);
      const live = await app.call('GET', `/v1/calls/${r.body.callId}`, { key: l.key });
      expect(live.body.status).to.equal('in-progress');
      first.close();
      await endedCall(app, l.key, r.body.callId, 60);
    });

    it('expires after 30 seconds: a late join is refused (4401) and the unjoined call is canceled', async () => {
      const l = await line();
      const r = await app.call('POST', '/v1/calls/web', { key: l.key, body: { agentId: l.agentId } });
      const moved = await app.call('POST', '/sandbox/clock', { key: ADMIN_TOKEN, body: { advanceSeconds: 31 } });
      expect(moved.status).to.equal(200);
      const late = await refusal(r.body.accessToken);
      expect(late.closed.code).to.equal(4401);
      expect(late.error).to.include({ code: 'WEB_CALL_TOKEN_INVALID' });
      expect(late.error.message).to.match(/expired/);
      const c = await callWhen(app, l.key, r.body.callId, (x) => x.status !== 'in-progress', 'the sweeper canceled the call');
      expect(c).to.include({ status: 'failed', disconnectionReason: 'canceled' });
    });

    it('an unknown token and a first message that is not a join are refused', async () => {
      const unknown = await refusal('wct_0000');
      expect(unknown.closed.code).to.equal(4401);
      expect(unknown.error.message).to.match(/Unknown access token/);
      const page = new PageSocket(socketUrl(app));
      await page.opened();
      page.sendRaw('hello');
      expect((await page.closed).code).to.equal(4400);
      expect(page.messages[0]).to.include({ type: 'error', code: 'BAD_MESSAGE' });
    });
  });

  it('the calls read model, with the speech steps of the turns above, rebuilds equal (runs after the calls)', async () => {
    const report = await rebuildProjector(app.rt.get(PLATFORM.ReadDb), app.rt.store, callsProjector, { checkOnly: true });
    expect(report.differences).to.deep.equal({ calls: 0, call_turns: 0 });
    const measured = await app.rt
      .get(PLATFORM.ReadDb)
      .selectFrom('call_turns')
      .select(['recognition_ms', 'synthesis_ms'])
      .where('recognition_ms', 'is not', null)
      .execute();
    expect(measured.length).to.be.greaterThan(0);
  });

  describe('the edge', () => {
    it('a plain GET of the socket path answers 426; another upgrade path answers 404', async () => {
      const r = await app.call('GET', '/v1/calls/web/connect');
      expect(r.status).to.equal(426);
      expect(r.body.error.code).to.equal('WEBSOCKET_REQUIRED');
      const other = new PageSocket(`${app.url.replace(/^http/, 'ws')}/v1/elsewhere`);
      const refused = await other.opened().then(
        () => 'opened',
        (err: Error) => err.message,
      );
      expect(refused).to.match(/404/);
    });

    it('serves the SDK, its worklet and the demo page (with a policy that runs only its own scripts)', async () => {
      for (const path of ['/sdk/web-call.js', '/sdk/web-call-worklet.js', '/web-call/demo.js']) {
        const r = await fetch(`${app.url}${path}`);
        expect(r.status, path).to.equal(200);
        expect(r.headers.get('content-type')).to.match(/^text\/javascript/);
      }
      const sdk = await fetch(`${app.url}/sdk/web-call.js`);
      expect(sdk.headers.get('access-control-allow-origin')).to.equal('*');
      expect(await sdk.text()).to.contain('export class WebCall');
      const page = await fetch(`${app.url}/web-call`);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      expect(page.headers.get('content-security-policy')).to.contain("script-src 'self'");
      expect(await page.text()).to.contain('src="/web-call/demo.js"');
    });
  });
});

/** Its own server, after the one above has closed (on a server database, a test app empties it for itself). */
describe('web calls when the server shuts down', function () {
  this.timeout(120_000);

  it('the server ends its web calls and tells the page, instead of waiting for them', async () => {
    const app = await startTestApp(FAST_VOICE_ENV);
    try {
      const { apiKey: key } = await app.newAccount('Shutdown');
      const a = await app.call('POST', '/v1/agents', { key, body: { name: 'Web agent' } });
      const { page } = await joinWebCall(app, key, a.body.id);
      await app.close(); // resolves only once the socket is gone: it would hang on a live one
      expect((await page.closed).code).to.equal(1000);
      expect(page.messages.at(-1)).to.deep.equal({ type: 'ended', by: 'agent' });
    } finally {
      await app.close();
    }
  });
});

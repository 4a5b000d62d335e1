import { expect } from 'chai';
import { type VoiceReceiver, voiceReceiver } from '../support/calls.js';
import type { TestApp } from '../support/http.js';
import { eventually } from '../support/numbers.js';
import { Baresip, findSpeech, freeSipPort, hasBinary, lineSpeech, sipLine, startSipApp } from '../support/sip.js';

/** how long a step that moves real audio may take on a loaded machine */
const SLOW = 120_000;
const QUESTION = 'What are your opening hours on Saturday?';
const ANSWER = 'We open at nine in the morning and close at five in the afternoon.';
const NUMBER = '+14155550142';
const isVoiceTurn = (t: { body: any }) => t.body.event === 'agent.message' && t.body.channel === 'voice';

/** `ms` of silence at 8 kHz */
const quiet = (ms: number) => new Int16Array(ms * 8);
const concat = (...parts: Int16Array[]) => {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/**
 * A real SIP phone against the platform (docs/sip.md): Debian's baresip calls an agent's number through a carrier
 * (127.0.0.1) and asks a spoken question; the agent's answer, rendered by the platform, is found in what baresip
 * recorded by correlating it with the same speech rendered here.
 */
describe('SIP calls with baresip', function () {
  this.timeout(300_000);
  let app: TestApp;
  let sipPort: number;
  let rx: VoiceReceiver;
  const phones: Baresip[] = [];

  before(async function () {
    if (!hasBinary('baresip') || !hasBinary('espeak-ng')) this.skip();
    rx = await voiceReceiver((t) => (isVoiceTurn(t) ? { json: { text: ANSWER } } : { json: {} }));
    ({ app, sipPort } = await startSipApp({
      carriers: [{ id: 'local', name: 'Local trunk', inbound: { addresses: ['127.0.0.1/32'] } }],
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', SIP_END_SILENCE_MS: '600' },
    }));
  });
  after(async () => {
    for (const p of phones) await p.stop();
    await rx?.close();
    await app?.close();
  });

  it('baresip calls an agent, asks a question, and hears the answer; the call record, transcript and agent.call_ended match', async () => {
    const line = await sipLine(app, 'local', NUMBER, {});
    const hook = await app.call('POST', `/v1/agents/${line.agentId}/webhook`, { key: line.key, body: { url: rx.url, timeout: 10 } });
    expect(hook.status).to.equal(200);
    const question = await lineSpeech(QUESTION, 'sandbox-miles');
    const phonePort = await freeSipPort();
    const phone = new Baresip({ port: phonePort, microphone: concat(quiet(1500), question, quiet(20_000)) });
    phones.push(phone);
    phone.start(`sip:${NUMBER.replace('+', '')}@127.0.0.1:${sipPort}`);

    const call = await eventually(
      async () => {
        const r = await app.call('GET', '/v1/calls?direction=inbound', { key: line.key });
        return r.body.data?.[0];
      },
      'the inbound call is recorded',
      SLOW,
    );
    const answered = await eventually(
      async () => {
        const r = await app.call('GET', `/v1/calls/${call.id}`, { key: line.key });
        const agent = r.body.turns?.find((t: any) => t.role === 'agent' && t.text === ANSWER);
        return agent ? r.body : undefined;
      },
      'the agent has answered the question (its turn recorded once spoken)',
      SLOW,
    );
    expect(answered).to.include({ direction: 'inbound', toNumber: NUMBER, phase: 'answered' });
    phone.command('/hangup');
    const ended = await eventually(
      async () => {
        const r = await app.call('GET', `/v1/calls/${call.id}`, { key: line.key });
        return r.body.status !== 'in-progress' ? r.body : undefined;
      },
      'the call has ended',
      SLOW,
    );
    expect(ended).to.include({ status: 'completed', disconnectionReason: 'user_hangup' });
    const heard = await eventually(async () => phone.heard() ?? undefined, "baresip's recording", SLOW);
    const reference = await lineSpeech(ANSWER);
    const match = findSpeech(heard, reference);
    expect(match.score, `the answer in baresip's recording (correlation ${match.score.toFixed(2)})`).to.be.above(0.75);
    const transcript = await app.call('GET', `/v1/calls/${call.id}/transcript`, { key: line.key });
    expect(transcript.body.transcript.map((t: any) => t.role)).to.deep.equal(['user', 'agent']);
    const endedEvent = await eventually(
      async () => rx.turns.find((t) => t.body.event === 'agent.call_ended' && t.body.data.callId === call.id),
      'agent.call_ended',
      SLOW,
    );
    expect(endedEvent.body.data).to.include({ direction: 'inbound', disconnectionReason: 'user_hangup' });
    expect(endedEvent.body.data.transcript.at(-1)).to.deep.equal({ role: 'agent', content: ANSWER });
  });
});

import { expect } from 'chai';
import { callStream } from '../../domain/call/call.js';
import { concatAudio } from '../../infrastructure/media/audio.js';
import { type VoiceReceiver, voiceReceiver } from '../support/calls.js';
import type { TestApp } from '../support/http.js';
import { eventually } from '../support/numbers.js';
import { Baresip, CALLEE_HOST, freeSipPort, GATEWAY_HOST, hasBinary, lineSpeech, sipLine, startSipApp } from '../support/sip.js';
import { startDigestGateway } from '../support/sip-gateway.js';
import { findSpeech, type SpeechMatch } from '../support/speech-match.js';

/** how long a step that moves real audio may take on a loaded machine */
const SLOW = Number(process.env.SIP_TEST_SLOW_MS ?? 120_000);
const QUESTION = 'What are your opening hours on Saturday?';
const ANSWER = 'We open at nine in the morning and close at five in the afternoon.';
const NUMBER = '+14155550142';
const GREETING = 'Hello, this is the bakery calling about your order.';
const isVoiceTurn = (t: { body: any }) => t.body.event === 'agent.message' && t.body.channel === 'voice';
/** a sentence nobody says in these calls: the judge must not find it (docs/testing.md#sip-tests) */
const NEVER_SAID = 'Your parcel will arrive on Tuesday between noon and four.';
/** what the PBX behind a SIP trunk says, and what the caller says to it */
const PBX_SAYS = 'Thank you for calling the reception desk, please hold the line.';
const CALLER_SAYS = 'I would like to speak to the manager about my booking.';

/**
 * `text` is in `heard` (at least 80% of its 100 ms pieces found, in order), and a sentence nobody said is not: the
 * judge is shown to fail on the very recording it passes.
 */
async function expectSpoken(heard: Int16Array, text: string, what: string, voice?: string): Promise<SpeechMatch> {
  const match = findSpeech(heard, await lineSpeech(text, voice));
  expect(match.found, `${what} in baresip's recording: ${JSON.stringify(match)}`).to.be.at.least(0.8);
  const other = findSpeech(heard, await lineSpeech(NEVER_SAID));
  expect(other.found, `a sentence never said, in baresip's recording: ${JSON.stringify(other)}`).to.be.below(0.2);
  return match;
}

/** `ms` of silence at 8 kHz */
const quiet = (ms: number) => new Int16Array(ms * 8);

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

  let gateway: ReturnType<typeof startDigestGateway> | null = null;
  let gatewayPort: number;

  before(async function () {
    if (!hasBinary('baresip') || !hasBinary('espeak-ng')) this.skip();
    rx = await voiceReceiver((t) => (isVoiceTurn(t) ? { json: { text: ANSWER } } : { json: {} }));
    gatewayPort = await freeSipPort();
    ({ app, sipPort } = await startSipApp({
      carriers: [
        { id: 'local', name: 'Local trunk', inbound: { addresses: ['127.0.0.0/8'] } },
        {
          id: 'gw',
          name: 'Gateway with digest',
          outbound: { host: GATEWAY_HOST, port: gatewayPort, transport: 'udp', username: 'platform', password: 'gateway-secret' },
          numberFormat: { plus: false },
        },
      ],
      env: {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        SIP_END_SILENCE_MS: '600',
        ...(process.env.SIP_TEST_LOG ? { LOG_LEVEL: process.env.SIP_TEST_LOG } : {}),
      },
    }));
  });
  after(async () => {
    gateway?.stop();
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
    const phone = new Baresip({ port: phonePort, microphone: concatAudio([quiet(1500), question, quiet(20_000)]) });
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
    // the line's report: the SIP Call-ID baresip called with, and RTP both ways (docs/sip.md#observability)
    expect(ended.sipCallId).to.be.a('string').and.not.equal('');
    expect(phone.log).to.include(ended.sipCallId);
    expect(ended.media.codec).to.be.oneOf(['PCMU', 'PCMA']);
    expect(ended.media.sent.packets).to.be.above(100);
    expect(ended.media.received.packets).to.be.above(100);
    expect(ended.media.received.lost).to.be.at.most(ended.media.received.packets / 10);
    // the line's report and the call's end come together, so they are written in one append (docs/calls.md#the-live-session)
    const commits = new Map((await app.rt.store.readStream(callStream(call.id))).map((e) => [e.type, e.checkpoint.split('/')[0]]));
    expect(commits.get('CallLegReported')).to.be.a('string').and.equal(commits.get('CallEnded'));
    const heard = await eventually(async () => phone.heard() ?? undefined, "baresip's recording", SLOW);
    await expectSpoken(heard, ANSWER, 'the answer');
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

  it('a number routed to a SIP trunk: a baresip caller is bridged to a baresip PBX, and each hears what the other says (docs/sip.md#sip-trunks)', async () => {
    const pbxPort = await freeSipPort();
    const pbx = new Baresip({
      port: pbxPort,
      microphone: concatAudio([quiet(1000), await lineSpeech(PBX_SAYS, 'sandbox-aria'), quiet(30_000)]),
      answer: true,
      user: 'pbx',
      host: CALLEE_HOST,
    });
    phones.push(pbx);
    pbx.start();
    await eventually(async () => pbx.log.includes('baresip is ready') || undefined, 'the PBX baresip is ready', SLOW);
    const line = await sipLine(app, 'local', '+14155550144', {});
    const pbxUri = `sip:pbx@${CALLEE_HOST}:${pbxPort}`;
    const trunk = await app.call('POST', '/v1/sip-trunks', {
      key: line.key,
      body: { name: 'Reception PBX', origination: { uris: [{ sip_uri: pbxUri }] } },
    });
    expect(trunk.status, JSON.stringify(trunk.body)).to.equal(200);
    const routed = await app.call('PATCH', `/v1/numbers/${line.numberId}`, { key: line.key, body: { sipTrunkId: trunk.body.id } });
    expect(routed.status, JSON.stringify(routed.body)).to.equal(200);

    const callerSpeech = await lineSpeech(CALLER_SAYS, 'sandbox-miles');
    // the caller says its sentence again and again from the start: the PBX hears it from whenever it answers
    const saying = concatAudio([callerSpeech, quiet(1000)]);
    const caller = new Baresip({ port: await freeSipPort(), microphone: concatAudio(Array.from({ length: 12 }, () => saying)) });
    phones.push(caller);
    caller.start(`sip:14155550144@127.0.0.1:${sipPort}`);
    // each phone's recording, read as it grows (its length only: judging it here, in the platform's own process, would
    // stall the packet clock), until it is long enough to hold the other's words: the PBX speaks a second after it
    // answers, and the caller's recording began a little before that (the platform answers it, then rings the PBX)
    const pbxSpeech = await lineSpeech(PBX_SAYS, 'sandbox-aria');
    const recorded = (phone: Baresip, samples: number) => async () => ((phone.hearing()?.length ?? 0) >= samples ? true : undefined);
    await eventually(recorded(caller, pbxSpeech.length + 5 * 8000), "the caller's recording to hold the PBX's words", SLOW);
    // two of the caller's turns' length: one whole sentence is in it
    await eventually(recorded(pbx, 2 * saying.length + 8000), "the PBX's recording to hold the caller's words", SLOW);
    caller.command('/hangup');
    const ended = await eventually(
      async () => {
        const list = await app.call('GET', '/v1/calls?direction=inbound', { key: line.key });
        const c = list.body.data?.[0];
        if (!c || c.status === 'in-progress') return undefined;
        return (await app.call('GET', `/v1/calls/${c.id}`, { key: line.key })).body;
      },
      'the bridged call has ended',
      SLOW,
    );
    expect(ended).to.include({ status: 'completed', disconnectionReason: 'user_hangup', sipUri: pbxUri, mode: 'sip' });
    expect(ended.sipFailures).to.deep.equal([]);
    // the caller's BYE ended the PBX's leg too: its recorder closes its file, with the file's length written in it
    const pbxHeard = await eventually(
      async () => ((pbx.heard()?.length ?? 0) > 8000 ? pbx.heard()! : undefined),
      "the PBX's call ended",
      SLOW,
    );
    const callerHeard = await eventually(
      async () => ((caller.heard()?.length ?? 0) > 8000 ? caller.heard()! : undefined),
      "the caller's recording closed",
      SLOW,
    );
    // what each heard, judged once the call is over; the judge fails on these recordings too (a sentence never said)
    await expectSpoken(callerHeard, PBX_SAYS, "the PBX's words, heard by the caller");
    await expectSpoken(pbxHeard, CALLER_SAYS, "the caller's words, heard by the PBX", 'sandbox-miles');
  });

  it('POST /v1/calls rings a baresip behind a carrier gateway that demands digest auth; the greeting is in its recording', async () => {
    const phonePort = await freeSipPort();
    gateway = startDigestGateway({
      address: GATEWAY_HOST,
      port: gatewayPort,
      user: 'platform',
      password: 'gateway-secret',
      forwardTo: `sip:callee@${CALLEE_HOST}:${phonePort}`,
    });
    const phone = new Baresip({ port: phonePort, microphone: quiet(30_000), answer: true, user: 'callee', host: CALLEE_HOST });
    phones.push(phone);
    phone.start();
    const line = await sipLine(app, 'gw', '+14155550143', { beginMessage: GREETING });
    // baresip needs a moment to open its port
    await eventually(async () => phone.log.includes('baresip is ready') || undefined, 'baresip is ready', SLOW);
    const placed = await app.call('POST', '/v1/calls', { key: line.key, body: { agentId: line.agentId, toNumber: '+14155550199' } });
    expect(placed.status, JSON.stringify(placed.body)).to.equal(200);
    const callId = placed.body.callId ?? placed.body.id;
    const greeted = await eventually(
      async () => {
        const r = await app.call('GET', `/v1/calls/${callId}`, { key: line.key });
        return r.body.turns?.some((t: any) => t.source === 'greeting' && t.spoken === GREETING) ? r.body : undefined;
      },
      'the greeting has been spoken',
      SLOW,
    ).catch(async (err) => {
      const r = await app.call('GET', `/v1/calls/${callId}`, { key: line.key });
      console.log(JSON.stringify({ call: r.body, seen: gateway?.seen, phone: phone.log.slice(-3000) }, null, 1));
      throw err;
    });
    expect(greeted).to.include({ direction: 'outbound', phase: 'answered', fromNumber: '+14155550143', toNumber: '+14155550199' });
    // the gateway challenged the first INVITE and let the signed one through, with the number as the carrier writes it
    expect(gateway.seen.map((s) => s.authorised)).to.deep.equal([false, true]);
    expect(gateway.seen[1]!.uri).to.match(/^sip:14155550199@/);
    expect(gateway.seen[1]!.from).to.match(/^sip:14155550143@/);
    const ended = await app.call('POST', `/v1/calls/${callId}/end`, { key: line.key });
    expect(ended.status).to.equal(200);
    const record = await eventually(
      async () => {
        const r = await app.call('GET', `/v1/calls/${callId}`, { key: line.key });
        return r.body.media ? r.body : undefined;
      },
      "the call's media on its record",
      SLOW,
    );
    expect(record.sipCallId).to.equal(gateway.seen[1]!.callId);
    expect(record.media.sent.packets).to.be.above(50);
    const heard = await eventually(
      async () => {
        const h = phone.heard();
        return h && h.length > 8000 ? h : undefined;
      },
      "baresip's recording",
      SLOW,
    );
    await expectSpoken(heard, GREETING, 'the greeting');
  });
});

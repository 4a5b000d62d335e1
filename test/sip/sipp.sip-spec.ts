import { expect } from 'chai';
import { type VoiceReceiver, voiceReceiver } from '../support/calls.js';
import type { TestApp } from '../support/http.js';
import { eventually } from '../support/numbers.js';
import { freeSipPort, GATEWAY_HOST, hasBinary, sipLine, startSipApp } from '../support/sip.js';
import { Sipp, type SippOptions, type SippResult, sippReport } from '../support/sipp.js';

/** how long a step may take on a loaded machine */
const SLOW = Number(process.env.SIP_TEST_SLOW_MS ?? 60_000);
/** SIPp's calls come from here: the carrier `local` */
const CARRIER_IP = '127.0.0.1';
/** a source that is no carrier */
const STRANGER_IP = '127.0.0.9';
const isVoiceTurn = (t: { body: any }) => t.body.event === 'agent.message' && t.body.channel === 'voice';

/**
 * SIPp scenarios against the platform's SIP endpoint (docs/testing.md#sip-tests): each scenario (test/sip/scenarios/)
 * is a far end that nobody here wrote the SIP of, and fails on a message it does not expect. The platform runs in
 * live mode with the zero-cost speech adapters (STT_PROVIDER=instant, TTS_PROVIDER=tone), so that what is tested is
 * the signalling and the media, not speech.
 */
describe('SIP scenarios with SIPp', function () {
  this.timeout(300_000);
  let app: TestApp;
  let sipPort: number;
  let gatewayPort: number;
  let rx: VoiceReceiver;
  /** what the agent's webhook answers to a caller turn, by the number called */
  const answers = new Map<string, unknown>();
  const running: Sipp[] = [];

  before(async function () {
    if (!hasBinary('sipp')) this.skip();
    rx = await voiceReceiver((t) => {
      if (!isVoiceTurn(t)) return { json: {} };
      return { json: answers.get(t.body.data?.toNumber ?? t.body.toNumber) ?? { text: 'Okay.' } };
    });
    gatewayPort = await freeSipPort();
    ({ app, sipPort } = await startSipApp({
      carriers: [
        { id: 'local', name: 'Local trunk', inbound: { addresses: [`${CARRIER_IP}/32`] } },
        { id: 'gw', name: 'Gateway', outbound: { host: GATEWAY_HOST, port: gatewayPort, transport: 'udp' }, numberFormat: { plus: false } },
      ],
      env: {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        STT_PROVIDER: 'instant',
        TTS_PROVIDER: 'tone',
        SIP_END_SILENCE_MS: '400',
        SIP_RING_MS: '1000',
        ...(process.env.SIP_TEST_LOG ? { LOG_LEVEL: process.env.SIP_TEST_LOG } : {}),
      },
    }));
  });
  afterEach(async () => {
    for (const s of running.splice(0)) await s.stop();
  });
  after(async () => {
    await rx?.close();
    await app?.close();
  });

  /** SIPp running `o`, stopped after the test */
  const sipp = (o: Partial<SippOptions> & { scenario: string }) => {
    const s = new Sipp({ ip: CARRIER_IP, port: 0, ...o } as SippOptions);
    running.push(s);
    return s;
  };
  /** a UAC calling `number` at the platform: it runs to its end */
  const call = async (scenario: string, number: string, o: Partial<SippOptions> = {}): Promise<SippResult> => {
    const s = sipp({
      scenario,
      target: `127.0.0.1:${sipPort}`,
      port: await freeSipPort(),
      mediaPort: await freeMediaPort(),
      service: number.replace('+', ''),
      ...o,
      keys: { caller: '+14155550123', ...(o.keys ?? {}) },
    }).start();
    return s.done;
  };
  const ok = (r: SippResult) => expect(r.code, sippReport(r)).to.equal(0);
  const callIdOf = (r: SippResult) => /^Call-ID:\s*(\S+)/im.exec(r.messages)?.[1];
  const callOf = async (line: { key: string }, sipCallId: string | undefined) =>
    eventually(
      async () => {
        const list = await app.call('GET', '/v1/calls?direction=inbound', { key: line.key });
        for (const c of list.body.data ?? []) {
          const r = await app.call('GET', `/v1/calls/${c.id}`, { key: line.key });
          if (r.body.sipCallId === sipCallId && r.body.status !== 'in-progress') return r.body;
        }
        return undefined;
      },
      `the call ${sipCallId} ended on its record`,
      SLOW,
    );

  it('a caller who hangs up: 100, 180, 200 with the SDP answer, ACK, BYE; the call completes as the caller hung up', async () => {
    const line = await sipLine(app, 'local', '+14155550150', {});
    const r = await call('uac-hangup.xml', '+14155550150', { extra: ['-d', '3000'] });
    ok(r);
    const record = await callOf(line, callIdOf(r));
    expect(record).to.include({
      direction: 'inbound',
      status: 'completed',
      disconnectionReason: 'user_hangup',
      fromNumber: '+14155550123',
    });
    expect(record.media.received.packets, 'the pcap was heard').to.be.above(50);
  });

  it('a caller who gives up while it rings: CANCEL answered 200, the INVITE 487; the call fails unanswered', async () => {
    const line = await sipLine(app, 'local', '+14155550151', {});
    const r = await call('uac-cancel.xml', '+14155550151');
    ok(r);
    const record = await callOf(line, callIdOf(r));
    expect(record).to.include({ direction: 'inbound', status: 'failed', phase: 'ended' });
    expect(record.answeredAt).to.equal(null);
  });

  it('refuses an unknown number (404), a source that is no carrier (403) and an offer without G.711 (488), and records no call', async () => {
    const line = await sipLine(app, 'local', '+14155550152', {});
    const statusOf = (r: SippResult) => /^SIP\/2\.0 (4\d\d)/m.exec(r.messages)?.[1];
    const unknown = await call('uac-refused.xml', '+14155559999', { keys: { codecs: '0' } });
    ok(unknown);
    expect(statusOf(unknown)).to.equal('404');
    const stranger = await call('uac-refused.xml', '+14155550152', { ip: STRANGER_IP, keys: { codecs: '0' } });
    ok(stranger);
    expect(statusOf(stranger)).to.equal('403');
    const g729 = await call('uac-refused.xml', '+14155550152', { keys: { codecs: '18' } });
    ok(g729);
    expect(statusOf(g729)).to.equal('488');
    const calls = await app.call('GET', '/v1/calls', { key: line.key });
    expect(calls.body.data).to.have.length(0);
  });

  it('an outbound call that the far end answers 486: the call fails as busy', async () => {
    const uas = sipp({ scenario: 'uas-busy.xml', ip: GATEWAY_HOST, port: gatewayPort }).start();
    const line = await sipLine(app, 'gw', '+14155550153', { beginMessage: 'Hello.' });
    const placed = await app.call('POST', '/v1/calls', { key: line.key, body: { agentId: line.agentId, toNumber: '+14155550299' } });
    expect(placed.status, JSON.stringify(placed.body)).to.equal(200);
    const callId = placed.body.callId ?? placed.body.id;
    const busy = await uas.done;
    ok(busy);
    const record = await eventually(
      async () => {
        const r = await app.call('GET', `/v1/calls/${callId}`, { key: line.key });
        return r.body.status === 'failed' ? r.body : undefined;
      },
      'the call failed',
      SLOW,
    );
    expect(record).to.include({ disconnectionReason: 'dial_busy' });
    expect(record.disconnectionDetail).to.match(/486/);
    expect(record.sipCallId).to.equal(callIdOf(busy));
    // the number as the carrier writes it (no +), from the agent's number
    expect(busy.messages).to.match(/INVITE sip:14155550299@/);
    expect(busy.messages).to.match(/^From:\s+<?sip:14155550153@/m);
  });

  it('re-INVITEs: a hold answered recvonly, a resume answered sendrecv, a refresh without SDP offered in the 200 and answered in the ACK', async () => {
    const line = await sipLine(app, 'local', '+14155550154', {});
    const r = await call('uac-reinvite.xml', '+14155550154');
    ok(r);
    const record = await callOf(line, callIdOf(r));
    expect(record).to.include({ status: 'completed', disconnectionReason: 'user_hangup' });
  });

  it('a late offer: an INVITE without SDP gets the offer in the 200 and its answer in the ACK; the audio flows', async () => {
    const line = await sipLine(app, 'local', '+14155550155', {});
    const r = await call('uac-late-offer.xml', '+14155550155', { extra: ['-d', '3000'] });
    ok(r);
    const record = await callOf(line, callIdOf(r));
    expect(record).to.include({ status: 'completed', disconnectionReason: 'user_hangup' });
    expect(record.media.codec).to.equal('PCMA');
    expect(record.media.received.packets, 'the pcap was heard').to.be.above(50);
  });
});

let nextMedia = 30_000 + 2 * Math.floor(Math.random() * 5000);
/** an even UDP port for SIPp's RTP (it uses this one and the next) */
async function freeMediaPort(): Promise<number> {
  nextMedia += 4;
  if (nextMedia > 59_000) nextMedia = 30_000;
  return nextMedia;
}

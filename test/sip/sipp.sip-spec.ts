import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { expect } from 'chai';
import { type VoiceReceiver, voiceReceiver } from '../support/calls.js';
import { ADMIN_TOKEN, type TestApp } from '../support/http.js';
import { eventually } from '../support/numbers.js';
import { CALLEE_HOST, freeSipPort, GATEWAY_HOST, hasBinary, sipLine, startSipApp } from '../support/sip.js';
import { Sipp, type SippOptions, type SippResult, sippReport } from '../support/sipp.js';

/** how long a step may take on a loaded machine */
const SLOW = Number(process.env.SIP_TEST_SLOW_MS ?? 60_000);
/** SIPp's calls come from here: the carrier `local` */
const CARRIER_IP = '127.0.0.1';
/** a source that is no carrier */
const STRANGER_IP = '127.0.0.9';
/** how long a SIP trunk's origination URI has to respond before it is passed over */
const TRUNK_RESPOND_MS = 1500;
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
  /** what the agent's webhook answers to the caller's turns, one after the other, by the platform's number on the call */
  const answers = new Map<string, unknown[]>();
  const running: Sipp[] = [];

  before(async function () {
    if (!hasBinary('sipp')) this.skip();
    rx = await voiceReceiver((t) => {
      if (!isVoiceTurn(t)) return { json: {} };
      const number = t.body.data?.direction === 'outbound' ? t.body.data?.from : t.body.data?.to;
      return { json: answers.get(number)?.shift() ?? { text: 'Okay.' } };
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
        // an origination URI that sends nothing is passed over after this (docs/sip.md#sip-trunks)
        SIP_TRUNK_RESPOND_MS: String(TRUNK_RESPOND_MS),
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
  /** the final refusal a UAC received (its messages hold only requests it sent and responses it got) */
  const refusalOf = (r: SippResult) => /^SIP\/2\.0 ([3-6]\d\d)/m.exec(r.messages)?.[1];
  const callIdOf = (r: SippResult) => /^Call-ID:\s*(\S+)/im.exec(r.messages)?.[1];
  /** the line's ended call with this SIP Call-ID (any, when undefined) */
  const callOf = async (line: { key: string }, sipCallId: string | undefined) =>
    eventually(
      async () => {
        const list = await app.call('GET', '/v1/calls?direction=inbound', { key: line.key });
        for (const c of list.body.data ?? []) {
          const r = await app.call('GET', `/v1/calls/${c.id}`, { key: line.key });
          if ((sipCallId === undefined || r.body.sipCallId === sipCallId) && r.body.status !== 'in-progress') return r.body;
        }
        return undefined;
      },
      `the call ${sipCallId} ended on its record`,
      SLOW,
    );

  it('a caller who hangs up: 100, 180, 200 with the SDP answer, ACK, BYE; the call completes as the caller hung up', async () => {
    const line = await sipLine(app, 'local', '+14155550150', {});
    // SIPp plays g711a.pcap as it was captured: 7 s; the caller hangs up after it and the end of its utterance
    const r = await call('uac-hangup.xml', '+14155550150', { extra: ['-d', '9000'] });
    ok(r);
    const record = await callOf(line, callIdOf(r));
    expect(record).to.include({
      direction: 'inbound',
      status: 'completed',
      disconnectionReason: 'user_hangup',
      fromNumber: '+14155550123',
    });
    expect(record.media.received.packets, 'the pcap was heard').to.be.above(50);
    // the sample is speech: the caller's turn (the instant recogniser says how long it was)
    expect(record.turns.filter((t: any) => t.role === 'user').length).to.be.at.least(1);
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

  it("keypad tones both ways: SIPp's RFC 4733 key is heard (digitReceived), and the agent's tones reach SIPp (echoed back)", async () => {
    const line = await sipLine(app, 'local', '+14155550156', { interruptionSensitivity: 0, beginMessage: 'Hello there, how can I help?' });
    const hook = await app.call('POST', `/v1/agents/${line.agentId}/webhook`, { key: line.key, body: { url: rx.url, timeout: 10 } });
    expect(hook.status).to.equal(200);
    answers.set('+14155550156', [{ text: 'One moment.', digits: '9#' }]);
    const r = await call('uac-digits.xml', '+14155550156', { rtpEcho: true, extra: ['-d', '8000'], keys: { tones_after_ms: '300' } });
    ok(r);
    const record = await callOf(line, callIdOf(r));
    // SIPp's key first; then the agent's 9 and #, back from SIPp's echo (the greeting came back as the caller's turn)
    expect(record.digitsReceived[0]).to.equal('1');
    expect(record.digitsReceived).to.include('9#');
    const history = (await app.rt.store.readStream(`call-${record.id}`)).map((e) => e.type);
    expect(history).to.include('CallDigitsSent');
  });

  /** an agent that transfers on the first caller turn (with a greeting, that SIPp's echo brings back as the turn) */
  const transferringLine = async (number: string, carrierId: string, transferNumber: string, greeting = true) => {
    const line = await sipLine(app, carrierId, number, {
      ...(greeting ? { beginMessage: 'Hello, you are through to the front desk.' } : {}),
      interruptionSensitivity: 0,
      transferNumber,
    });
    const hook = await app.call('POST', `/v1/agents/${line.agentId}/webhook`, { key: line.key, body: { url: rx.url, timeout: 10 } });
    expect(hook.status).to.equal(200);
    answers.set(number, [{ text: 'Transferring you now.', action: 'transfer' }]);
    return line;
  };

  it('a transfer by REFER: the caller (SIPp) accepts it and reports it done; the call ends transferred', async () => {
    const line = await transferringLine('+14155550157', 'local', '+14155550300');
    const r = await call('uac-refer-accept.xml', '+14155550157', { rtpEcho: true });
    ok(r);
    expect(r.messages).to.match(/^Refer-To:\s*<?sip:14155550300@127\.0\.0\.2:\d+/m);
    const record = await callOf(line, callIdOf(r));
    expect(record).to.include({ status: 'completed', disconnectionReason: 'call_transfer', transferredTo: '+14155550300' });
    expect(record.disconnectionDetail).to.match(/by REFER/);
  });

  it('a transfer the caller refuses (501): the platform calls the target through the carrier and relays the audio; the target sees the caller', async () => {
    const target = sipp({
      scenario: 'uas-answer.xml',
      ip: GATEWAY_HOST,
      port: gatewayPort,
      mediaPort: await freeMediaPort(),
      rtpEcho: true,
    }).start();
    const line = await transferringLine('+14155550158', 'local', '+14155550301');
    const r = await call('uac-refer-refuse.xml', '+14155550158', { rtpEcho: true, extra: ['-d', '3000'] });
    ok(r);
    const t = await target.done;
    ok(t);
    // transfer_caller_id's default (transferee): the caller's number, as the gateway's carrier writes it
    expect(t.messages).to.match(/^INVITE sip:14155550301@127\.0\.0\.2/m);
    expect(t.messages).to.match(/^From:\s+<?sip:14155550123@/m);
    const record = await callOf(line, callIdOf(r));
    expect(record).to.include({ status: 'completed', disconnectionReason: 'call_transfer', transferredTo: '+14155550301' });
    expect(record.disconnectionDetail).to.match(/bridged: the far end refused REFER with 501/);
  });

  it("a transfer on a number routed through a SIP trunk follows the trunk's transfer_caller_id: transferor shows the platform's number", async () => {
    // the callee and the transfer target (+14155550303), both behind the gateway: one SIPp, two calls
    const far = sipp({
      scenario: 'uas-transfer-pair.xml',
      ip: GATEWAY_HOST,
      port: gatewayPort,
      mediaPort: await freeMediaPort(),
      calls: 2,
      extra: ['-d', '3000'],
    }).start();
    const line = await transferringLine('+14155550159', 'gw', '+14155550303', false);
    const trunk = await app.call('POST', '/v1/sip-trunks', {
      key: line.key,
      body: {
        name: 'Front desk PBX',
        transfers: 'all',
        transfer_caller_id: 'transferor',
        origination: { uris: [{ sip_uri: 'sip:pbx@192.0.2.10' }] },
      },
    });
    expect(trunk.status, JSON.stringify(trunk.body)).to.equal(200);
    const routed = await app.call('PATCH', `/v1/numbers/${line.numberId}`, { key: line.key, body: { sipTrunkId: trunk.body.id } });
    expect(routed.status, JSON.stringify(routed.body)).to.equal(200);
    const placed = await app.call('POST', '/v1/calls', { key: line.key, body: { agentId: line.agentId, toNumber: '+14155550302' } });
    expect(placed.status, JSON.stringify(placed.body)).to.equal(200);
    const r = await far.done;
    ok(r);
    // the target's INVITE shows the transferor's number (the platform's number on the call), not the callee's
    const targetInvite = /^INVITE sip:14155550303@[\s\S]*?\r?\n\r?\n/m.exec(r.messages)?.[0] ?? '';
    expect(targetInvite).to.match(/^From:\s+<?sip:14155550159@/m);
    const record = await app.call('GET', `/v1/calls/${placed.body.callId ?? placed.body.id}`, { key: line.key });
    expect(record.body).to.include({ disconnectionReason: 'call_transfer', transferredTo: '+14155550303' });
  });

  /** a new line whose number routes to a SIP trunk of these origination URIs */
  const trunkLine = async (number: string, uris: readonly { sip_uri: string; priority: number; weight?: number }[]) => {
    const line = await sipLine(app, 'local', number, {});
    const trunk = await app.call('POST', '/v1/sip-trunks', { key: line.key, body: { name: 'PBX', origination: { uris } } });
    expect(trunk.status, JSON.stringify(trunk.body)).to.equal(200);
    const routed = await app.call('PATCH', `/v1/numbers/${line.numberId}`, { key: line.key, body: { sipTrunkId: trunk.body.id } });
    expect(routed.status, JSON.stringify(routed.body)).to.equal(200);
    return line;
  };

  it('a number routed to a SIP trunk: a URI that never responds is passed over after the timeout, one that answers 503 is passed over, the next answers; the caller is bridged to it and its BYE ends both legs', async () => {
    // the customer's URIs: a host that reads INVITEs and never answers, then two SIPp of one priority
    const silent = createSocket('udp4');
    const silentPort = await freeSipPort();
    await new Promise<void>((r) => silent.bind(silentPort, CALLEE_HOST, () => r()));
    let silentInvites = 0;
    silent.on('message', (m) => {
      if (m.toString('latin1').startsWith('INVITE ')) silentInvites++;
    });
    const unavailablePort = await freeSipPort();
    const answeringPort = await freeSipPort();
    const unavailable = sipp({ scenario: 'uas-unavailable.xml', ip: GATEWAY_HOST, port: unavailablePort }).start();
    const answering = sipp({
      scenario: 'uas-answer.xml',
      ip: GATEWAY_HOST,
      port: answeringPort,
      mediaPort: await freeMediaPort(),
      rtpEcho: true,
    }).start();
    try {
      const silentUri = `sip:pbx@${CALLEE_HOST}:${silentPort}`;
      const unavailableUri = `sip:pbx@${GATEWAY_HOST}:${unavailablePort}`;
      const answeringUri = `sip:pbx@${GATEWAY_HOST}:${answeringPort};transport=udp`;
      // listed out of order: priority first; within priority 20 the zero-weight URI comes last (RFC 2782)
      const line = await trunkLine('+14155550180', [
        { sip_uri: answeringUri, priority: 20, weight: 0 },
        { sip_uri: unavailableUri, priority: 20, weight: 10 },
        { sip_uri: silentUri, priority: 10 },
      ]);

      const r = await call('uac-hangup.xml', '+14155550180', { extra: ['-d', '4000'] });
      ok(r);
      ok(await unavailable.done);
      // the far end got the caller's BYE: SIPp's scenario ends with it
      ok(await answering.done);
      expect(silentInvites).to.be.at.least(1);
      const record = await callOf(line, callIdOf(r));
      expect(record).to.include({ mode: 'sip', status: 'completed', disconnectionReason: 'user_hangup', sipUri: answeringUri });
      expect(record.sipFailures).to.deep.equal([
        { sipUri: silentUri, error: `no answer within ${TRUNK_RESPOND_MS} ms` },
        // the sip package answers its own 503, without the far end's reason phrase (docs/sip.md#sip-trunks)
        { sipUri: unavailableUri, error: 'SIP 503' },
      ]);
      // the caller's audio reached the platform (that each side hears the other is the baresip test's: test/sip/baresip)
      expect(record.media.received.packets).to.be.greaterThan(0);
    } finally {
      silent.close();
    }
  });

  it("a trunk bridge passes the caller's keypad tones on to the far end as RFC 4733 events, with the caller's audio", async () => {
    // the far end's SDP names the test's own socket: what the platform sends it is read here
    const media = createSocket('udp4');
    const mediaPort = await freeMediaPort();
    await new Promise<void>((r) => media.bind(mediaPort, CALLEE_HOST, () => r()));
    const payloadTypes = new Set<number>();
    const events: number[] = [];
    media.on('message', (m) => {
      const pt = m[1]! & 0x7f;
      payloadTypes.add(pt);
      if (pt === 101 && m.length >= 16) events.push(m[12]!);
    });
    const farPort = await freeSipPort();
    const far = sipp({
      scenario: 'uas-answer-media-at.xml',
      ip: GATEWAY_HOST,
      port: farPort,
      keys: { rtp_ip: CALLEE_HOST, rtp_port: String(mediaPort) },
    }).start();
    try {
      const line = await trunkLine('+14155550183', [{ sip_uri: `sip:pbx@${GATEWAY_HOST}:${farPort}`, priority: 1 }]);
      // the key comes 2 s after the caller's ACK: the bridge is up by then (SIP on loopback)
      const r = await call('uac-digits.xml', '+14155550183', { extra: ['-d', '3000'], keys: { tones_after_ms: '2000' } });
      ok(r);
      ok(await far.done);
      const record = await callOf(line, callIdOf(r));
      expect(record).to.include({ disconnectionReason: 'user_hangup', sipUri: `sip:pbx@${GATEWAY_HOST}:${farPort}` });
      // audio (PCMU, 0) and the key 1 as telephone-events (101), whose first payload byte is the event
      expect([...payloadTypes]).to.include.members([0, 101]);
      expect(events.length).to.be.greaterThan(0);
      expect(new Set(events)).to.deep.equal(new Set([1]));
    } finally {
      media.close();
    }
  });

  it("the caller is answered only when a trunk's URI answers: the URI's early media (183 with SDP) is passed on as a 183 with the platform's SDP, then the 200 carries the same", async () => {
    const farPort = await freeSipPort();
    const far = sipp({
      scenario: 'uas-early-media.xml',
      ip: GATEWAY_HOST,
      port: farPort,
      mediaPort: await freeMediaPort(),
      extra: ['-d', '1500'],
    }).start();
    const line = await trunkLine('+14155550184', [{ sip_uri: `sip:pbx@${GATEWAY_HOST}:${farPort}`, priority: 1 }]);
    const r = await call('uac-hangup.xml', '+14155550184', { extra: ['-d', '1500'] });
    ok(r);
    ok(await far.done);
    // SIPp's log: a dashed line with the time, `UDP message received [n] bytes :`, the message
    const received = r.messages
      .split(/^-{10,}.*$/m)
      .filter((m) => /^\s*UDP message received/.test(m))
      .map((m) => m.replace(/^\s*UDP message received[^\n]*\n\s*/, '').trim());
    const statuses = received.map((m) => Number(m.slice(8, 11)));
    // 100 and 180 at once, 183 once the URI sent it, 200 when it answered (repeated 200s aside)
    expect([...new Set(statuses)]).to.deep.equal([100, 180, 183, 200]);
    const sdpOf = (status: number) =>
      /\r?\n\r?\n(v=0[\s\S]*)$/.exec(received.find((m) => m.startsWith(`SIP/2.0 ${status}`)) ?? '')?.[1]?.trim();
    expect(sdpOf(183)).to.match(/^m=audio \d+ RTP\/AVP 8 101/m);
    expect(sdpOf(200)).to.equal(sdpOf(183));
    const record = await callOf(line, callIdOf(r));
    expect(record).to.include({ status: 'completed', disconnectionReason: 'user_hangup', sipUri: `sip:pbx@${GATEWAY_HOST}:${farPort}` });
    // the URI's audio (its early media and after) reached the caller through the bridge
    expect(record.media.sent.packets).to.be.greaterThan(0);
  });

  it("every URI of the trunk fails: the caller, never answered, hears the last one's class (503) and the call fails sip_unreachable", async () => {
    const unavailablePort = await freeSipPort();
    const unavailable = sipp({ scenario: 'uas-unavailable.xml', ip: GATEWAY_HOST, port: unavailablePort }).start();
    const uri = `sip:pbx@${GATEWAY_HOST}:${unavailablePort}`;
    const line = await trunkLine('+14155550185', [{ sip_uri: uri, priority: 1 }]);
    const r = await call('uac-refused.xml', '+14155550185', { keys: { codecs: '0' } });
    ok(r);
    expect(refusalOf(r)).to.equal('503');
    ok(await unavailable.done);
    const record = await callOf(line, callIdOf(r));
    expect(record).to.include({ status: 'failed', disconnectionReason: 'sip_unreachable', sipUri: null, answeredAt: null });
    expect(record.sipFailures).to.deep.equal([{ sipUri: uri, error: 'SIP 503' }]);
  });

  it("a trunk's URI that answers 486 ends the call busy: the next URI is never tried", async () => {
    const busyPort = await freeSipPort();
    const busy = sipp({ scenario: 'uas-busy.xml', ip: GATEWAY_HOST, port: busyPort }).start();
    const nextPort = await freeSipPort();
    const next = createSocket('udp4');
    await new Promise<void>((r) => next.bind(nextPort, CALLEE_HOST, () => r()));
    let nextInvites = 0;
    next.on('message', () => nextInvites++);
    try {
      const busyUri = `sip:pbx@${GATEWAY_HOST}:${busyPort}`;
      const line = await trunkLine('+14155550181', [
        { sip_uri: busyUri, priority: 1 },
        { sip_uri: `sip:pbx@${CALLEE_HOST}:${nextPort}`, priority: 2 },
      ]);
      // the caller is not answered first (docs/sip.md#sip-trunks): it hears the URI's busy
      const r = await call('uac-refused.xml', '+14155550181', { keys: { codecs: '0' } });
      ok(r);
      expect(refusalOf(r)).to.equal('486');
      ok(await busy.done);
      const record = await callOf(line, callIdOf(r));
      expect(record).to.include({ status: 'failed', disconnectionReason: 'dial_busy', sipUri: null, answeredAt: null });
      expect(record.sipFailures).to.deep.equal([{ sipUri: busyUri, error: 'SIP 486 Busy Here' }]);
      expect(nextInvites).to.equal(0);
    } finally {
      next.close();
    }
  });

  it("a caller who hangs up while the trunk's URI rings: the platform cancels it (CANCEL, 487)", async () => {
    const ringingPort = await freeSipPort();
    const ringing = sipp({ scenario: 'uas-ring-cancel.xml', ip: GATEWAY_HOST, port: ringingPort }).start();
    const line = await trunkLine('+14155550182', [{ sip_uri: `sip:pbx@${GATEWAY_HOST}:${ringingPort}`, priority: 1 }]);
    // the caller rings while the URI does (it is answered only when the URI answers), and gives up: CANCEL
    const r = await call('uac-cancel.xml', '+14155550182');
    ok(r);
    // SIPp's scenario passes only with the CANCEL, answered, and the ACK of its 487
    ok(await ringing.done);
    const record = await callOf(line, callIdOf(r));
    expect(record).to.include({ status: 'failed', disconnectionReason: 'user_hangup', sipUri: null, answeredAt: null });
  });

  /** the value of a /metrics counter with these labels (0 when absent) */
  const metric = async (name: string, labels: string) => {
    const text = (await app.call('GET', '/metrics')).body as string;
    const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  it('malformed and oversized messages are dropped with a log line or answered, and a call in progress carries on', async () => {
    const line = await sipLine(app, 'local', '+14155550170', {});
    const before = {
      unparseable: await metric('sip_messages_dropped_total', 'reason="unparseable"'),
      incomplete: await metric('sip_messages_dropped_total', 'reason="incomplete"'),
      oversized: await metric('sip_messages_dropped_total', 'reason="oversized"'),
      connection: await metric('sip_messages_dropped_total', 'reason="unread_connection"'),
    };
    const inProgress = call('uac-hangup.xml', '+14155550170', { extra: ['-d', '6000'] });
    // wait until that call is up
    await eventually(
      async () => {
        const r = await app.call('GET', '/v1/calls?direction=inbound', { key: line.key });
        return r.body.data?.[0]?.status === 'in-progress' && r.body.data[0].id;
      },
      'the call in progress',
      SLOW,
    );
    const malformed = await call('uac-malformed.xml', '+14155550170', { keys: { big: 'x'.repeat(9000) } });
    ok(malformed);
    // what SIPp cannot send: datagrams of no SIP, one too large to parse, a TCP connection of no SIP
    const udp = createSocket('udp4');
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
    const send = (b: Buffer) => new Promise<void>((r) => udp.send(b, sipPort, '127.0.0.1', () => r()));
    await send(Buffer.from('this is not SIP at all\r\n\r\n'));
    await send(Buffer.from([0x80, 0x00, 0xff, 0x13, 0x37, 0, 0, 0, 1, 2, 3, 4]));
    await send(Buffer.alloc(20_000, 'A'));
    udp.close();
    await new Promise<void>((resolve) => {
      const tcp = connect(sipPort, '127.0.0.1', () => {
        tcp.end('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      tcp.on('close', () => resolve());
      tcp.on('error', () => resolve());
    });
    ok(await inProgress);
    const record = await callOf(line, undefined);
    expect(record).to.include({ status: 'completed', disconnectionReason: 'user_hangup' });
    await eventually(
      async () => ((await metric('sip_messages_dropped_total', 'reason="unread_connection"')) > before.connection ? true : undefined),
      'the TCP connection counted',
      SLOW,
    );
    expect(await metric('sip_messages_dropped_total', 'reason="unparseable"')).to.be.at.least(before.unparseable + 2);
    expect(await metric('sip_messages_dropped_total', 'reason="incomplete"')).to.be.at.least(before.incomplete + 1);
    expect(await metric('sip_messages_dropped_total', 'reason="oversized"')).to.be.at.least(before.oversized + 1);
    expect(await metric('sip_responses_total', 'method="OPTIONS",status="513",direction="sent"')).to.be.at.least(1);
  });

  it('a flood of INVITEs from a source that is no carrier: a few are answered 403 each second, the rest dropped', async () => {
    const before = await metric('sip_messages_dropped_total', 'reason="not_a_carrier_flood"');
    const udp = createSocket('udp4');
    await new Promise<void>((r) => udp.bind(0, STRANGER_IP, () => r()));
    const answers: string[] = [];
    udp.on('message', (m) => answers.push(m.toString('latin1').split('\r\n')[0]!));
    const port = udp.address().port;
    for (let i = 0; i < 40; i++) {
      const invite = [
        `INVITE sip:14155550199@127.0.0.1:${sipPort} SIP/2.0`,
        `Via: SIP/2.0/UDP ${STRANGER_IP}:${port};branch=z9hG4bK-flood-${i}`,
        `From: <sip:flood@${STRANGER_IP}>;tag=f${i}`,
        `To: <sip:14155550199@127.0.0.1>`,
        `Call-ID: flood-${i}@${STRANGER_IP}`,
        'CSeq: 1 INVITE',
        'Max-Forwards: 70',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
      await new Promise<void>((r) => udp.send(Buffer.from(invite), sipPort, '127.0.0.1', () => r()));
    }
    await eventually(
      async () => ((await metric('sip_messages_dropped_total', 'reason="not_a_carrier_flood"')) >= before + 20 ? true : undefined),
      'the flood dropped',
      SLOW,
    );
    udp.close();
    expect(answers.every((a) => a === 'SIP/2.0 403 Forbidden')).to.equal(true);
    // five a second at most: the 40 went out within a few seconds even on a loaded machine
    expect(answers.length).to.be.at.least(1).and.at.most(20);
  });

  it('takes up a carrier created through the operator API without a restart, and drops it when it is deleted', async () => {
    const from = '127.0.0.7';
    const created = await app.call('POST', '/admin/carriers', {
      key: ADMIN_TOKEN,
      body: { id: 'late-carrier', inbound: { addresses: [`${from}/32`] } },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const line = await sipLine(app, 'late-carrier', '+14155550171', {});
    const statusOf = (r: SippResult) => /^SIP\/2\.0 (\d\d\d)/m.exec(r.messages.split('UDP message received').slice(1).join(''))?.[1];
    // within the engine's refresh (2 s) the carrier's calls are taken
    await eventually(
      async () => {
        const r = await call('uac-hangup.xml', '+14155550171', { ip: from, extra: ['-d', '500'], timeoutS: 15 });
        return r.code === 0 ? r : undefined;
      },
      "a call from the new carrier's address taken",
      SLOW,
    );
    const released = await app.call('DELETE', `/v1/numbers/${line.numberId}`, { key: line.key });
    expect(released.status).to.be.oneOf([200, 204]);
    expect((await app.call('DELETE', '/admin/carriers/late-carrier', { key: ADMIN_TOKEN })).status).to.equal(204);
    const refused = await eventually(
      async () => {
        const r = await call('uac-refused.xml', '+14155550171', { ip: from, keys: { codecs: '0' }, timeoutS: 15 });
        return r.code === 0 && statusOf(r) === '403' ? r : undefined;
      },
      'the deleted carrier refused',
      SLOW,
    );
    expect(statusOf(refused)).to.equal('403');
  });
});

let nextMedia = 30_000 + 2 * Math.floor(Math.random() * 5000);
/** an even UDP port for SIPp's RTP (it uses this one and the next) */
async function freeMediaPort(): Promise<number> {
  nextMedia += 4;
  if (nextMedia > 59_000) nextMedia = 30_000;
  return nextMedia;
}

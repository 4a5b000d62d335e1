import { expect } from 'chai';
import { decodeWav } from '../../infrastructure/speech/wav.js';
import type { TestApp } from '../support/http.js';
import { credit, eventually } from '../support/numbers.js';
import { freeSipPort, GATEWAY_HOST, hasBinary, sipLine, startSipApp } from '../support/sip.js';
import { Sipp, type SippOptions, type SippResult, sippReport } from '../support/sipp.js';

/** how long a step may take on a loaded machine */
const SLOW = Number(process.env.SIP_TEST_SLOW_MS ?? 60_000);
/** the PBX that authenticates by its address (a termination address of its trunk) */
const PBX_IP = '127.0.0.4';
/** the PBX that authenticates by digest: an address no carrier and no trunk has */
const ROAMING_PBX_IP = '127.0.0.5';
const SECRET = 'office-pbx-secret-4711';

/**
 * A customer's PBX calling out through its SIP trunk (docs/sip.md#calls-from-your-pbx), with SIPp as the PBX and as
 * the carrier's gateway (an operator carrier pointing at it): digest credentials or a source address of the trunk
 * let the call in, the From must be a number routed to the trunk, the call goes out through the carrier with that
 * number as caller id, the PBX is answered only when the carrier answers, and audio and BYE pass through.
 */
describe('SIP trunks: calls from the customer PBX out through the carrier (SIPp)', function () {
  this.timeout(300_000);
  let app: TestApp;
  let sipPort: number;
  let gatewayPort: number;
  const running: Sipp[] = [];

  before(async function () {
    if (!hasBinary('sipp')) this.skip();
    gatewayPort = await freeSipPort();
    ({ app, sipPort } = await startSipApp({
      carriers: [
        { id: 'local', name: 'Local trunk', inbound: { addresses: ['127.0.0.1/32'] } },
        { id: 'gw', name: 'Gateway', outbound: { host: GATEWAY_HOST, port: gatewayPort, transport: 'udp' }, numberFormat: { plus: false } },
      ],
      env: {
        STT_PROVIDER: 'instant',
        TTS_PROVIDER: 'tone',
        // one live call a number: a second call from the PBX on it meets a full cap
        CALL_MAX_CONCURRENT_PER_NUMBER: '1',
        ...(process.env.SIP_TEST_LOG ? { LOG_LEVEL: process.env.SIP_TEST_LOG } : {}),
      },
    }));
  });
  afterEach(async () => {
    for (const s of running.splice(0)) await s.stop();
  });
  after(async () => app?.close());

  const sipp = (o: Partial<SippOptions> & { scenario: string; ip: string }) => {
    const s = new Sipp({ port: 0, ...o } as SippOptions);
    running.push(s);
    return s;
  };
  /** the carrier's gateway: a SIPp UAS running `scenario` */
  const gateway = (scenario: string, extra: readonly string[] = []) =>
    sipp({ scenario, ip: GATEWAY_HOST, port: gatewayPort, mediaPort: freeMediaPort(), rtpEcho: true, extra }).start();
  /** the PBX: SIPp sending `to` from `from`, with the trunk's credentials when `password` is given */
  const pbx = async (o: {
    from: string;
    to: string;
    ip: string;
    password?: string;
    holdMs?: number;
    scenario?: string;
  }): Promise<SippResult> =>
    sipp({
      scenario: o.scenario ?? 'uac-pbx.xml',
      ip: o.ip,
      target: `127.0.0.1:${sipPort}`,
      port: await freeSipPort(),
      mediaPort: freeMediaPort(),
      service: o.to,
      keys: { caller: o.from },
      timeoutS: 60,
      extra: ['-d', String(o.holdMs ?? 3000), ...(o.password ? ['-au', 'office', '-ap', o.password] : [])],
    }).start().done;
  const ok = (r: SippResult) => expect(r.code, sippReport(r)).to.equal(0);
  /** the final statuses SIPp received for its INVITEs, in order */
  const finals = (r: SippResult) =>
    [...r.messages.matchAll(/^SIP\/2\.0 (\d{3}) [^\r\n]*[\s\S]*?^CSeq:\s*\d+ INVITE/gm)].map((m) => Number(m[1])).filter((s) => s >= 200);

  /** an account whose number (imported with the carrier `local`) routes to a trunk with this termination side */
  const trunkLine = async (number: string, termination: Record<string, unknown>) => {
    const line = await sipLine(app, 'local', number, {});
    const trunk = await app.call('POST', '/v1/sip-trunks', {
      key: line.key,
      body: { name: 'Office', origination: { uris: [{ sip_uri: 'sip:reception@192.0.2.10' }] }, termination },
    });
    expect(trunk.status, JSON.stringify(trunk.body)).to.equal(200);
    const routed = await app.call('PATCH', `/v1/numbers/${line.numberId}`, { key: line.key, body: { sipTrunkId: trunk.body.id } });
    expect(routed.status, JSON.stringify(routed.body)).to.equal(200);
    // the engine reads the trunks at most every 2 seconds
    await new Promise((r) => setTimeout(r, 2100));
    return { ...line, trunkId: trunk.body.id as string };
  };
  /** the line's outbound call, once it ended */
  const endedCall = (line: { key: string }) =>
    eventually(
      async () => {
        const list = await app.call('GET', '/v1/calls?direction=outbound', { key: line.key });
        const c = list.body.data?.[0];
        if (!c) return undefined;
        const r = await app.call('GET', `/v1/calls/${c.id}`, { key: line.key });
        return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
      },
      'the call from the PBX ended on its record',
      SLOW,
    );

  it('a PBX with the trunk’s digest credentials: challenged 407, then dialled through the carrier with the number as caller id; audio and BYE pass through', async () => {
    const line = await trunkLine('+14155550401', { credentials: [{ username: 'office', password: SECRET }] });
    const gw = gateway('uas-answer.xml');
    const r = await pbx({ from: '+14155550401', to: '+14155550499', ip: ROAMING_PBX_IP, password: SECRET });
    ok(r);
    expect(finals(r)).to.deep.equal([407, 200]);
    // the gateway's scenario ends with the BYE the PBX's BYE became
    const far = await gw.done;
    ok(far);
    const invite = /^INVITE sip:14155550499@[\s\S]*?\r?\n\r?\n/m.exec(far.messages)?.[0] ?? '';
    expect(invite, far.messages.slice(0, 2000)).to.match(/^From:\s+<?sip:14155550401@/m);
    const record = await endedCall(line);
    expect(record).to.include({
      direction: 'outbound',
      mode: 'sip',
      status: 'completed',
      disconnectionReason: 'user_hangup',
      fromNumber: '+14155550401',
      toNumber: '+14155550499',
      sipTrunkId: line.trunkId,
    });
    expect(record.sipUri).to.match(new RegExp(`^sip:${ROAMING_PBX_IP}:\\d+$`));
    // the PBX's audio reached the platform, and the gateway's echo of it came back to the PBX through the bridge
    expect(record.media.received.packets).to.be.greaterThan(0);
    expect(record.media.sent.packets).to.be.greaterThan(0);
    // it counts in usage as an outbound call of its seconds, under no agent (docs/calls.md#sip-trunks)
    const usage = await eventually(
      async () => {
        const u = (await app.call('GET', '/v1/usage', { key: line.key })).body;
        return u.stats.totalCalls === 1 ? u : undefined;
      },
      'the call counted in usage',
      SLOW,
    );
    expect(usage.stats.callSeconds).to.equal(record.durationSeconds);
    const byNumber = (await app.call('GET', '/v1/usage/by-number', { key: line.key })).body.data;
    expect(byNumber.find((x: { numberId: string }) => x.numberId === line.numberId)).to.include({ calls: 1 });
  });

  it('a wrong password is refused (403) and no call is recorded', async () => {
    const line = await trunkLine('+14155550402', { credentials: [{ username: 'office', password: SECRET }] });
    const r = await pbx({ from: '+14155550402', to: '+14155550499', ip: ROAMING_PBX_IP, password: 'not-the-secret-at-all' });
    ok(r);
    expect(finals(r)).to.deep.equal([407, 403]);
    const list = await app.call('GET', '/v1/calls', { key: line.key });
    expect(list.body.data).to.deep.equal([]);
  });

  it('a From that is no number routed to the trunk is 403 with the reason; a destination that is no E.164 number is 484', async () => {
    const line = await trunkLine('+14155550403', { addresses: [`${PBX_IP}/32`] });
    // a number of the platform, but of another account and routed to no trunk
    await sipLine(app, 'local', '+14155550404', {});
    for (const from of ['+14155550404', '+14155550555', 'reception']) {
      const r = await pbx({ from, to: '+14155550499', ip: PBX_IP });
      ok(r);
      expect(finals(r), from).to.deep.equal([403]);
      expect(r.messages).to.match(/^Warning: 399 .*caller id/m);
    }
    const bad = await pbx({ from: '+14155550403', to: '123', ip: PBX_IP });
    ok(bad);
    expect(finals(bad)).to.deep.equal([484]);
    expect((await app.call('GET', '/v1/calls', { key: line.key })).body.data).to.deep.equal([]);
  });

  it('an address-authenticated PBX is taken without a challenge; a carrier’s busy is passed back as 486 and the call fails busy', async () => {
    const line = await trunkLine('+14155550405', { addresses: [`${PBX_IP}/32`] });
    const gw = gateway('uas-busy.xml');
    const r = await pbx({ from: '+14155550405', to: '+14155550498', ip: PBX_IP });
    ok(r);
    expect(finals(r)).to.deep.equal([486]);
    ok(await gw.done);
    const record = await endedCall(line);
    expect(record).to.include({ direction: 'outbound', status: 'failed', disconnectionReason: 'dial_busy', sipTrunkId: line.trunkId });
  });

  it('a recorded account’s call from the PBX: the relayed audio, both ways, is the call’s recording (docs/sip.md#recording-bridged-calls)', async () => {
    const line = await trunkLine('+14155550407', { addresses: [`${PBX_IP}/32`] });
    await credit(app, line.accountId, 10_000_000);
    const enabled = await app.call('POST', '/credits/recording/enable', { key: line.key });
    expect(enabled.status, JSON.stringify(enabled.body)).to.equal(200);
    const gw = gateway('uas-answer.xml');
    const r = await pbx({ from: '+14155550407', to: '+14155550496', ip: PBX_IP, holdMs: 4000 });
    ok(r);
    ok(await gw.done);
    const ended = await endedCall(line);
    const record = await eventually(
      async () => {
        const c = (await app.call('GET', `/v1/calls/${ended.id}`, { key: line.key })).body;
        return c.recordingAvailable ? c : undefined;
      },
      'the recording of the bridged call',
      SLOW,
    );
    expect(record.recordingUrl).to.be.a('string');
    const res = await fetch(record.recordingUrl);
    expect(res.status).to.equal(200);
    const pcm = decodeWav(new Uint8Array(await res.arrayBuffer()));
    expect(pcm.sampleRate).to.equal(8000);
    // about the 4 s the call lasted (SIPp's -d), from the answer on
    expect(pcm.samples.length / 8000).to.be.within(2, 8);
    // SIPp's spoken sample (the PBX's side, and the gateway's echo of it) is in it: not silence
    let energy = 0;
    for (const x of pcm.samples) energy += x * x;
    expect(Math.sqrt(energy / pcm.samples.length)).to.be.greaterThan(200);
  });

  it('the carrier’s side hangs up: its BYE ends the PBX’s leg too (a BYE to the PBX), and the call completes', async () => {
    const line = await trunkLine('+14155550408', { addresses: [`${PBX_IP}/32`] });
    const gw = gateway('uas-answer-hangup.xml', ['-d', '1500']);
    const r = await pbx({ from: '+14155550408', to: '+14155550495', ip: PBX_IP, scenario: 'uac-pbx-hungup.xml' });
    // the PBX's scenario ends only with the platform's BYE, answered
    ok(r);
    ok(await gw.done);
    const record = await endedCall(line);
    expect(record).to.include({ status: 'completed', disconnectionReason: 'user_hangup', sipTrunkId: line.trunkId });
    expect(record.disconnectionDetail).to.contain('bridged party hung up');
  });

  it('a full cap is 503 with Retry-After (the PBX may try another route), and records no second call', async () => {
    const line = await trunkLine('+14155550409', { addresses: [`${PBX_IP}/32`] });
    const gw = gateway('uas-answer.xml');
    const first = pbx({ from: '+14155550409', to: '+14155550494', ip: PBX_IP, holdMs: 8000 });
    await eventually(
      async () => {
        const list = await app.call('GET', '/v1/calls?direction=outbound', { key: line.key });
        return list.body.data?.some((c: { status: string }) => c.status === 'in-progress') ? true : undefined;
      },
      'the first call in progress',
      SLOW,
    );
    const second = await pbx({ from: '+14155550409', to: '+14155550493', ip: PBX_IP });
    ok(second);
    expect(finals(second)).to.deep.equal([503]);
    expect(second.messages).to.match(/^Retry-After:\s*30/m);
    ok(await first);
    ok(await gw.done);
    expect((await app.call('GET', '/v1/calls', { key: line.key })).body.data).to.have.length(1);
  });

  it('the PBX gives up while the carrier rings: its CANCEL cancels the carrier’s leg too, and the call fails unanswered', async () => {
    const line = await trunkLine('+14155550410', { addresses: [`${PBX_IP}/32`] });
    // the gateway rings and passes only with the platform's CANCEL, answered, and the ACK of its 487
    const gw = sipp({ scenario: 'uas-ring-cancel.xml', ip: GATEWAY_HOST, port: gatewayPort }).start();
    const r = await sipp({
      scenario: 'uac-cancel.xml',
      ip: PBX_IP,
      target: `127.0.0.1:${sipPort}`,
      port: await freeSipPort(),
      mediaPort: freeMediaPort(),
      service: '+14155550492',
      keys: { caller: '+14155550410' },
      timeoutS: 60,
    }).start().done;
    ok(r);
    ok(await gw.done);
    const record = await endedCall(line);
    expect(record).to.include({ status: 'failed', disconnectionReason: 'user_hangup', answeredAt: null, sipTrunkId: line.trunkId });
  });
});

let nextMedia = 40_000 + 2 * Math.floor(Math.random() * 4000);
/** an even UDP port for SIPp's RTP (it uses this one and the next) */
function freeMediaPort(): number {
  nextMedia += 4;
  if (nextMedia > 59_000) nextMedia = 40_000;
  return nextMedia;
}

import { randomBytes, randomInt } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import sip, { type NameAddr, type Remote, type SipRequest, type SipResponse, type Stack } from 'sip';
import digest from 'sip/digest.js';
import {
  type CallLeg,
  type DialFailure,
  type DialRequest,
  type InboundDecision,
  type InboundOffer,
  LegEndedError,
  type LegListener,
  SipBridgeError,
  TelephonyError,
  type VoiceEnginePort,
} from '../../application/calls/voice-engine.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { type BridgeFailure, callerRefusal } from '../../domain/sip-trunk/routing.js';
import type { SpeechPipelineDeps } from '../media/speech-pipeline.js';
import { BridgeRecorder } from './bridge-recorder.js';
import { type Carrier, type CarrierDirectory, carrierByAddress } from './carriers.js';
import { InboundDigest } from './inbound-digest.js';
import { sipMetrics } from './metrics.js';
import { DEFAULT_NUMBER_FORMAT, fromCarrier, toCarrier } from './number-format.js';
import { RtpClock } from './rtp-clock.js';
import { type RemoteMedia, type RtpPorts, RtpSession } from './rtp-session.js';
import { OFFERED_CODECS, OUR_DTMF_PAYLOAD, readRemoteSdp, writeSdp } from './sdp.js';
import { SipLeg } from './sip-leg.js';
import { type TrunkDirectory, type TrunkTermination, trunksByAddress } from './trunk-book.js';
import { createWatchedStack, type DropReason } from './watched-stack.js';

export type SipEngineOptions = Readonly<{
  /** where SIP listens */
  address: string;
  port: number;
  udp: boolean;
  tcp: boolean;
  /** the address put in Via, Contact and SDP: what the far end reaches this process at (docs/sip.md#nat-and-ports) */
  publicAddress: string;
  /** where RTP sockets bind */
  rtpAddress: string;
  rtpPorts: RtpPorts;
  /** how long an inbound call rings before it is answered */
  ringMs: number;
  /**
   * how long an origination URI of a SIP trunk has to take a bridged call (docs/sip.md#sip-trunks): to respond at all
   * (`respondMs`), then to answer once it responded (`answerMs`); past either it is passed over
   */
  trunkTimeouts: Readonly<{ respondMs: number; answerMs: number }>;
  carriers: CarrierDirectory;
  /** the SIP trunks' termination sides: a customer's PBX sending calls out (docs/sip.md#calls-from-your-pbx) */
  trunks: TrunkDirectory;
  /** the carrier a number was imported with (outbound calls from it leave through that carrier) */
  carrierOfNumber: (e164: string) => Promise<string | null>;
  speech: SpeechPipelineDeps;
  /** the key of the digest nonces: the same in every voice process, so a challenge from one is answered to another */
  nonceKey: Buffer;
  log: LoggerPort;
}>;

/** the largest SIP body taken (an SDP is well under 2 kB): a larger one is answered 513 */
const MAX_BODY = 8 * 1024;
/** the largest message a TCP connection may send: beyond, the package drops the connection (a flood) */
const MAX_STREAM_MESSAGE = 16 * 1024;
/** non-carrier requests answered per source and second; beyond, they are dropped (a flood) */
const STRANGER_ANSWERS_PER_SECOND = 5;
/** RFC 3261's T1 and T2: the 2xx of an INVITE is sent again at T1, doubling up to T2, until the ACK (§13.3.1.4) */
const T1 = 500;
const T2 = 4000;
const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, NOTIFY';
const AGENT = 'agent-voice-platform';
/** how often the carriers are read again (a change through the operator API is taken up within this) */
const CARRIER_REFRESH_MS = 2000;
/** how long a REFER may take to report its outcome (NOTIFY) */
const REFER_TIMEOUT_MS = 30_000;

type Dialog = {
  callId: string;
  direction: 'inbound' | 'outbound';
  state: 'early' | 'confirmed' | 'ended';
  carrier: Carrier | null;
  localTag: string;
  remoteTag: string | null;
  /** our From/To as we send them in-dialog (the far end's as To) */
  local: NameAddr;
  remote: NameAddr;
  /** where in-dialog requests go (the far end's Contact) */
  target: string;
  routes: NameAddr[];
  transport: 'UDP' | 'TCP';
  cseq: number;
  rtp: RtpSession;
  sdpSession: number;
  sdpVersion: number;
  leg: SipLeg | null;
  /** inbound: the INVITE being answered */
  invite: SipRequest | null;
  retransmit: NodeJS.Timeout | null;
  /** outbound: the INVITE sent, for CANCEL and ACK */
  sentInvite: SipRequest | null;
  /** the other leg of a bridge, from its INVITE on (what a hangup of this one also ends, or cancels while it rings) */
  bridgedTo: Dialog | null;
  /** a REFER waiting for its outcome */
  refer: { resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout } | null;
  /** outbound: what its responses move */
  onFinal: ((rs: SipResponse) => void) | null;
  /** outbound: told of each provisional response (the far end is alive) */
  onProvisional: (() => void) | null;
  /** outbound: told of a 180 or 183 (the far end rings), with the response */
  onRinging: ((rs: SipResponse) => void) | null;
  /** inbound, not answered yet: what the caller was told of its progress (a bridge's ringing or early media) */
  progress: 'none' | 'ringing' | 'early_media';
  /** inbound, bridged to a trunk's URIs: why the last one did not take the call (what an unanswered caller hears) */
  bridgeFailure: BridgeFailure | null;
  /** the call is recorded: a bridge keeps its relayed audio (docs/sip.md#recording-bridged-calls) */
  record: boolean;
  recorder: BridgeRecorder | null;
  canceled: boolean;
  /**
   * The 200 sent carries this engine's offer and the far end's answer comes in the ACK (docs/sip.md#inbound-calls):
   * `initial` for a late-offer INVITE (no audio until that answer), `update` for a re-INVITE without SDP.
   */
  awaitingAnswer: 'initial' | 'update' | null;
};

const tag = () => randomBytes(6).toString('hex');
const uriUser = (uri: string | { user?: string }): string | null => {
  try {
    return (typeof uri === 'string' ? sip.parseUri(uri) : uri)?.user ?? null;
  } catch {
    return null;
  }
};

/**
 * The SIP voice engine (docs/sip.md): any carrier's SIP trunk reaches the platform's numbers through it, and
 * outbound calls leave through a carrier's gateway. Signalling runs on kirm's `sip` package (parsing, transactions,
 * UDP and TCP); each call's media is an `RtpSession` carrying the shared speech pipeline (`SipLeg`).
 */
export class SipEngine implements VoiceEnginePort {
  private stack: Stack | null = null;
  private inbound: ((offer: InboundOffer) => Promise<InboundDecision>) | null = null;
  private readonly dialogs = new Map<string, Dialog>();
  private readonly clock = new RtpClock();
  private readonly strangers = new Map<string, { second: number; count: number; warned: boolean }>();
  /** the second a dropped message of each source and reason was last logged */
  private readonly droppedLogged = new Map<string, number>();
  /** the registrations with carriers' gateways, by carrier id, with the settings they were made with */
  private readonly registrations = new Map<string, { settings: string; registration: Registration }>();
  private carrierCache: { at: number; list: readonly Carrier[] } | null = null;
  private trunkCache: { at: number; list: readonly TrunkTermination[] } | null = null;
  private refreshTimer: NodeJS.Timeout | null = null;
  private readonly digest: InboundDigest;

  constructor(private readonly o: SipEngineOptions) {
    this.digest = new InboundDigest(o.publicAddress, Date.now, o.nonceKey);
  }

  /** Opens the SIP ports (and registers with the carriers that want it). */
  async start(): Promise<void> {
    const o = this.o;
    this.stack = createWatchedStack(
      {
        address: o.address,
        port: o.port,
        publicAddress: o.publicAddress,
        udp: o.udp,
        tcp: o.tcp,
        maxBytesHeaders: MAX_STREAM_MESSAGE,
        maxContentLength: MAX_STREAM_MESSAGE,
        logger: { error: (e) => o.log.warn({ err: e }, 'SIP message handling failed') },
      },
      (rq, remote) => {
        this.onRequest(rq, remote).catch((err: unknown) => {
          o.log.error({ err, method: rq.method }, 'SIP request failed');
          this.respond(rq, 500, 'Server Internal Error');
        });
      },
      (reason, source) => this.dropped(reason, source),
    );
    await this.refreshCarriers();
    this.refreshTimer = setInterval(() => {
      this.refreshCarriers().catch((err: unknown) =>
        o.log.warn({ err }, 'reading the carriers failed; the engine keeps the last ones read'),
      );
    }, CARRIER_REFRESH_MS);
    this.refreshTimer.unref();
    o.log.info({ address: o.address, port: o.port, udp: o.udp, tcp: o.tcp, publicAddress: o.publicAddress }, 'SIP engine listening');
  }

  onInbound(handler: (offer: InboundOffer) => Promise<InboundDecision>): void {
    this.inbound = handler;
  }

  async close(): Promise<void> {
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    this.refreshTimer = null;
    for (const { registration } of this.registrations.values()) registration.stop();
    this.registrations.clear();
    for (const d of [...this.dialogs.values()]) this.hangupDialog(d, 'host_lost');
    // the BYEs need a moment on the wire before the sockets close
    if (this.dialogs.size > 0) await new Promise((r) => setTimeout(r, 200));
    this.stack?.destroy();
    this.stack = null;
  }

  /** the calls this process holds a dialog for */
  get activeCalls(): number {
    return this.dialogs.size;
  }

  // ---- outbound -----------------------------------------------------------------------------------------

  async dial(req: DialRequest, listener: LegListener): Promise<CallLeg> {
    const carrier = await this.outboundCarrier(req.from);
    if (!carrier?.outbound)
      throw new TelephonyError('no carrier has an outbound gateway: add one (POST /admin/carriers or SIP_CARRIERS_FILE)', false);
    const d = await this.dialOut(carrier, toCarrier(req.to, carrier.numberFormat), toCarrier(req.from, carrier.numberFormat), req.callId);
    const leg = this.makeLeg(d, req.callId, listener);
    const ring = setTimeout(() => {
      if (d.state !== 'early') return;
      this.cancel(d);
      this.failLeg(d, 'no_answer', `no answer within ${Math.round(req.ringTimeoutMs / 1000)} s`);
    }, req.ringTimeoutMs);
    d.onFinal = (rs) => {
      clearTimeout(ring);
      if (rs.status >= 200 && rs.status < 300) {
        leg.answered('human');
        return;
      }
      const [reason, detail] = dialFailure(rs);
      this.failLeg(d, reason, detail);
    };
    return leg;
  }

  /** Sends an INVITE through `carrier`'s gateway to `user`; progress lands on the dialog. */
  private async dialOut(carrier: Carrier, user: string, callerUser: string, callId: string): Promise<Dialog> {
    const gw = carrier.outbound!;
    const host = isIP(gw.host)
      ? gw.host
      : await lookup(gw.host).then(
          (a) => a.address,
          (err: Error) => {
            throw new TelephonyError(`the carrier's gateway ${gw.host} cannot be resolved: ${err.message}`, true);
          },
        );
    const transport = gw.transport === 'tcp' ? 'TCP' : 'UDP';
    const target = `sip:${user}@${host}:${gw.port}${transport === 'TCP' ? ';transport=tcp' : ''}`;
    return this.invite({
      carrier,
      target,
      transport,
      from: `sip:${callerUser}@${this.o.publicAddress}`,
      to: `sip:${user}@${gw.host}`,
      credentials: gw.username && gw.password ? { user: gw.username, password: gw.password } : null,
      log: { callId, to: user },
    });
  }

  private async invite(o: {
    carrier: Carrier | null;
    target: string;
    transport: 'UDP' | 'TCP';
    from: string;
    to: string;
    credentials: { user: string; password: string } | null;
    log: Record<string, unknown>;
  }): Promise<Dialog> {
    const rtp = await this.openRtp(`out-${o.log.callId}`, []);
    const callId = `${randomBytes(12).toString('hex')}@${this.o.publicAddress}`;
    const d = this.newDialog({
      callId,
      direction: 'outbound',
      carrier: o.carrier,
      remoteTag: null,
      local: { uri: o.from, params: {} },
      remote: { uri: o.to, params: {} },
      target: o.target,
      routes: [],
      transport: o.transport,
      rtp,
      invite: null,
      awaitingAnswer: null,
    });
    let authorised = false;
    const send = (auth: SipResponse | null) => {
      const rq: SipRequest = {
        method: 'INVITE',
        uri: o.target,
        headers: {
          to: { uri: o.to, params: {} },
          from: d.local,
          'call-id': callId,
          cseq: { seq: ++d.cseq, method: 'INVITE' },
          contact: [this.contact(d.transport)],
          via: [],
          'max-forwards': 70,
          'content-type': 'application/sdp',
          'user-agent': AGENT,
          allow: ALLOW,
        },
        content: this.sdp(d, OFFERED_CODECS, 'sendrecv'),
      };
      if (auth && o.credentials) digest.signRequest(null, rq, auth, o.credentials);
      d.sentInvite = rq;
      this.stack!.send(this.routed(rq), (rs) =>
        this.onInviteResponse(d, rs, (challenge) => {
          if (authorised || !o.credentials) return false;
          authorised = true;
          send(challenge);
          return true;
        }),
      );
    };
    send(null);
    return d;
  }

  private onInviteResponse(d: Dialog, rs: SipResponse, reauth: (rs: SipResponse) => boolean): void {
    if (rs.status < 200) {
      d.onProvisional?.();
      if (rs.status === 180 || rs.status === 183) {
        d.leg?.ringing();
        d.onRinging?.(rs);
      }
      return;
    }
    sipMetrics.responses.inc({ method: 'INVITE', status: String(rs.status), direction: 'received' });
    if (rs.status >= 300) {
      if ((rs.status === 401 || rs.status === 407) && !d.canceled && reauth(rs)) return;
      if (d.state === 'early') {
        d.state = 'ended';
        this.forget(d);
        d.onFinal?.(rs);
      }
      return;
    }
    // a 2xx: ACKed every time it comes (it is sent again until the ACK arrives)
    const first = d.state === 'early';
    if (first) {
      d.remoteTag = (rs.headers.to.params.tag as string | undefined) ?? null;
      d.remote = rs.headers.to;
      const contact = Array.isArray(rs.headers.contact) ? rs.headers.contact[0] : undefined;
      if (contact) d.target = sip.stringifyUri(contact.uri);
      d.routes = [...(rs.headers['record-route'] ?? [])].reverse();
      d.state = 'confirmed';
    }
    this.sendAck(d, rs.headers.cseq.seq);
    if (!first) return;
    const media = readRemoteSdp(rs.content ?? '');
    if (d.canceled || !media) {
      this.sendInDialog(d, 'BYE');
      this.endDialog(d);
      if (!d.canceled) d.onFinal?.({ ...rs, status: 488, reason: 'the answer has no G.711 audio' });
      return;
    }
    d.rtp.setRemote(media);
    d.onFinal?.(rs);
  }

  private sendAck(d: Dialog, seq: number): void {
    this.sendRequest({
      method: 'ACK',
      uri: d.target,
      headers: {
        to: d.remote,
        from: d.local,
        'call-id': d.callId,
        cseq: { seq, method: 'ACK' },
        via: [],
        'max-forwards': 70,
        ...(d.routes.length ? { route: d.routes } : {}),
      },
    });
  }

  private cancel(d: Dialog): void {
    const rq = d.sentInvite;
    if (!rq || d.state !== 'early' || d.canceled) return;
    d.canceled = true;
    this.sendRequest({
      method: 'CANCEL',
      uri: rq.uri,
      headers: {
        to: rq.headers.to,
        from: rq.headers.from,
        'call-id': rq.headers['call-id'],
        cseq: { seq: rq.headers.cseq.seq, method: 'CANCEL' },
        via: rq.headers.via,
        'max-forwards': 70,
      },
    });
  }

  // ---- inbound ------------------------------------------------------------------------------------------

  private async onRequest(rq: SipRequest, remote: Remote): Promise<void> {
    sipMetrics.requests.inc({ method: rq.method });
    if ((rq.content?.length ?? 0) > MAX_BODY) {
      this.o.log.warn({ method: rq.method, source: remote.address, bytes: rq.content?.length }, 'SIP request too large');
      this.respond(rq, 513, 'Message Too Large');
      return;
    }
    const d = this.dialogs.get(rq.headers['call-id']);
    switch (rq.method) {
      case 'ACK':
        if (d) this.acked(d, rq);
        return;
      case 'INVITE':
        if (d && rq.headers.to.params.tag) return this.reinvite(d, rq);
        if (d) return; // a retransmission: the transaction layer answers it
        return this.newCall(rq, remote);
      case 'CANCEL':
        return this.canceled(d, rq);
      case 'BYE':
        if (!d) return this.respond(rq, 481, 'Call/Transaction Does Not Exist');
        this.respond(rq, 200, 'OK');
        this.remoteBye(d);
        return;
      case 'INFO':
        if (!d) return this.respond(rq, 481, 'Call/Transaction Does Not Exist');
        this.respond(rq, 200, 'OK');
        this.info(d, rq);
        return;
      case 'NOTIFY':
        if (!d) return this.respond(rq, 481, 'Call/Transaction Does Not Exist');
        this.respond(rq, 200, 'OK');
        this.notify(d, rq);
        return;
      case 'OPTIONS':
        this.respond(rq, 200, 'OK', { allow: ALLOW, accept: 'application/sdp' });
        return;
      default:
        this.respond(rq, 405, 'Method Not Allowed', { allow: ALLOW });
    }
  }

  private async newCall(rq: SipRequest, remote: Remote): Promise<void> {
    const carriers = await this.carriers();
    let carrier = carrierByAddress(carriers, remote.address);
    if (!carrier) {
      // a customer's PBX sending a call out through its SIP trunk, by its address or its credentials
      const trunks = await this.trunks();
      const byAddress = trunksByAddress(trunks, remote.address);
      if (byAddress.length > 0) return this.fromPbx(rq, remote, byAddress);
      const who = this.byCredentials(carriers, trunks, rq, remote);
      if (who === 'challenged') return;
      if (who && 'trunks' in who) return this.fromPbx(rq, remote, who.trunks);
      carrier = who?.carrier ?? null;
    }
    if (!carrier) {
      if (this.stranger(remote.address)) this.respond(rq, 403, 'Forbidden');
      return;
    }
    const rqUser = uriUser(rq.uri);
    const to = (rqUser && fromCarrier(rqUser, carrier.numberFormat)) ?? fromCarrier(uriUser(rq.headers.to.uri) ?? '', carrier.numberFormat);
    const fromUser = uriUser(rq.headers.from.uri) ?? 'anonymous';
    const from = fromCarrier(fromUser, carrier.numberFormat) ?? fromUser;
    const log = { sipCallId: rq.headers['call-id'], carrier: carrier.id, from, to, source: remote.address };
    if (!to) {
      this.o.log.info(log, 'SIP INVITE for no phone number: 404');
      return this.respond(rq, 404, 'Not Found');
    }
    const d = await this.takeInvite(rq, remote, carrier, log);
    if (!d) return;
    this.respond(rq, 180, 'Ringing', { to: d.local, contact: [this.contact(d.transport)] });
    d.progress = 'ringing';
    const decision = await this.decide(d, { engineCallId: d.callId, from, to }, log);
    if (!decision.accept) return this.refuse(d, refusal(decision.code));
    const leg = this.attachLeg(d, decision, 'the caller hung up while it rang');
    if (!leg) return;
    // a call routed to a SIP trunk is answered when one of its URIs answers (docs/sip.md#sip-trunks)
    if (decision.answerOnBridge) return;
    if (this.o.ringMs > 0) await new Promise((r) => setTimeout(r, this.o.ringMs));
    if (d.state !== 'early' || leg.ended) return;
    this.answer(d);
    leg.answered('human');
  }

  /**
   * A new INVITE taken on: refused 488 without G.711 audio in its offer (an INVITE without SDP is a late offer: the 200
   * offers, the ACK answers, RFC 3261 §13.2.1), else answered 100 and tracked as an early dialog with an RTP port of
   * its own (null when none is free: 503).
   */
  private async takeInvite(rq: SipRequest, remote: Remote, carrier: Carrier | null, log: Record<string, unknown>): Promise<Dialog | null> {
    const late = !hasSdp(rq);
    const media = late ? null : readRemoteSdp(rq.content ?? '');
    if (!late && !media) {
      this.o.log.info(log, 'SIP INVITE without G.711 audio: 488');
      this.respond(rq, 488, 'Not Acceptable Here', { warning: '304 - "offer PCMU or PCMA"' });
      return null;
    }
    this.respond(rq, 100, 'Trying');
    let rtp: RtpSession;
    try {
      rtp = await this.openRtp(rq.headers['call-id'], [remote.address]);
    } catch (err) {
      this.o.log.error({ ...log, err }, 'no RTP port for an inbound call');
      this.respond(rq, 503, 'Service Unavailable');
      return null;
    }
    if (media) rtp.setRemote(media);
    const contact = Array.isArray(rq.headers.contact) ? rq.headers.contact[0] : undefined;
    return this.newDialog({
      callId: rq.headers['call-id'],
      direction: 'inbound',
      carrier,
      remoteTag: (rq.headers.from.params.tag as string | undefined) ?? null,
      local: { ...rq.headers.to, params: { ...rq.headers.to.params } },
      remote: rq.headers.from,
      target: contact ? sip.stringifyUri(contact.uri) : `sip:${remote.address}:${remote.port}`,
      routes: [...(rq.headers['record-route'] ?? [])],
      transport: remote.protocol.toUpperCase() === 'TCP' ? 'TCP' : 'UDP',
      rtp,
      invite: rq,
      awaitingAnswer: media ? null : 'initial',
    });
  }

  /** The platform's decision on an offer (a failure to decide is a refusal). */
  private async decide(d: Dialog, offer: InboundOffer, log: Record<string, unknown>): Promise<InboundDecision> {
    if (!this.inbound) return { accept: false, reason: 'this process takes no inbound calls' };
    const decision = await this.inbound(offer).catch((err: unknown) => {
      this.o.log.error({ ...log, err }, 'planning an inbound call failed');
      return { accept: false as const, reason: 'the call could not be taken' };
    });
    if (!decision.accept) this.o.log.info({ ...log, reason: decision.reason, sipCallId: d.callId }, 'inbound SIP call refused');
    return decision;
  }

  /** Refuses an early dialog's INVITE with `status` (unless the caller went meanwhile) and forgets it. */
  private refuse(d: Dialog, [status, reason, headers]: readonly [number, string, Record<string, unknown>?]): void {
    if (d.state === 'early' && d.invite) this.respond(d.invite, status, reason, { to: d.local, ...(headers ?? {}) });
    this.endDialog(d);
  }

  /**
   * A call the customer's PBX sends out through its SIP trunk (docs/sip.md#calls-from-your-pbx), from an address of
   * `trunks` or with their credentials. The destination is the Request-URI's user (E.164, else 484), the caller id
   * the From's, which the platform checks (a number routed to one of `trunks`, else 403). An accepted call is dialled
   * through the number's carrier with the number as caller id; the PBX hears the carrier's ringing (180) and is
   * answered only when the carrier answers; a carrier's refusal is passed back as its status.
   */
  private async fromPbx(rq: SipRequest, remote: Remote, trunks: readonly TrunkTermination[]): Promise<void> {
    const to = e164Of(uriUser(rq.uri) ?? uriUser(rq.headers.to.uri));
    const from = e164Of(uriUser(rq.headers.from.uri));
    const log = { sipCallId: rq.headers['call-id'], trunks: trunks.map((t) => t.trunkId), from, to, source: remote.address };
    if (!to) {
      this.o.log.info(log, 'SIP INVITE from a PBX for no E.164 number: 484');
      return this.respond(rq, 484, 'Address Incomplete', { warning: '399 - "dial an E.164 number, such as +14155550100"' });
    }
    if (!from) {
      this.o.log.info(log, 'SIP INVITE from a PBX whose From is no phone number: 403');
      return this.respond(rq, 403, 'Forbidden', { warning: `399 - "${CALLER_ID_REFUSED}"` });
    }
    const d = await this.takeInvite(rq, remote, null, log);
    if (!d) return;
    const source = `sip:${remote.address.includes(':') ? `[${remote.address}]` : remote.address}:${remote.port}`;
    const fromTrunk = { trunkIds: trunks.map((t) => t.trunkId), source };
    const decision = await this.decide(d, { engineCallId: d.callId, from, to, fromTrunk }, log);
    if (!decision.accept) return this.refuse(d, pbxRefusal(decision.code));
    const leg = this.attachLeg(d, decision, 'the PBX gave the call up before it was dialled');
    if (!leg) return;
    const carrier = await this.outboundCarrier(from).catch(() => null);
    if (!carrier?.outbound) {
      this.respond(rq, 503, 'Service Unavailable', { to: d.local });
      this.failLeg(d, 'provider_error', 'no carrier has an outbound gateway: add one (POST /admin/carriers or SIP_CARRIERS_FILE)');
      return;
    }
    const gw = carrier.outbound;
    const target = `sip:${toCarrier(to, carrier.numberFormat)}@${gw.host}:${gw.port}${gw.transport === 'tcp' ? ';transport=tcp' : ''}`;
    const ringMs = decision.ringTimeoutMs ?? 60_000;
    const ring = setTimeout(() => {
      const b = d.bridgedTo;
      if (d.state !== 'early' || !b || b.state !== 'early') return;
      this.cancel(b);
      this.respond(rq, 480, 'Temporarily Unavailable', { to: d.local });
      this.failLeg(d, 'no_answer', `no answer within ${Math.round(ringMs / 1000)} s`);
    }, ringMs);
    try {
      await this.bridgeCall(d, carrier, target, from);
      clearTimeout(ring);
      leg.answered('human');
    } catch (err) {
      clearTimeout(ring);
      // the PBX gave up, or the ring time ran out: that end is already the call's
      if (err instanceof LegEndedError || d.state !== 'early') return;
      const refused = err instanceof BridgeRefused ? err : null;
      const [status, reason] = refused ? toPbx(refused.status, refused.reason) : [503, 'Service Unavailable'];
      this.respond(rq, status, reason, { to: d.local });
      const [why, detail] = refused ? dialFailure(refused) : (['provider_error', (err as Error).message] as const);
      this.o.log.info({ ...log, status: refused?.status, detail }, 'the carrier did not take a call from a PBX');
      this.failLeg(d, why, detail);
    }
  }

  /**
   * A ringing far leg `b`'s progress, passed on to the caller `d` while it is not answered: a 183 with SDP is early
   * media (a ringback tone, an announcement), relayed from `b` to the caller after a 183 with the engine's SDP answer
   * (the 200 repeats it); anything else is a 180, sent once. The session hears that the call rings.
   */
  private passProgress(d: Dialog, b: Dialog, rs: SipResponse): void {
    if (d.state !== 'early' || !d.invite) return;
    d.leg?.ringing();
    const mine = d.rtp.media;
    const early = rs.status === 183 && mine ? readRemoteSdp(rs.content ?? '') : null;
    if (early && mine && d.progress !== 'early_media') {
      b.rtp.setRemote(early);
      b.rtp.onAudio = (s) => d.rtp.relay(s);
      d.progress = 'early_media';
      this.respond(d.invite, 183, 'Session Progress', {
        to: d.local,
        contact: [this.contact(d.transport)],
        'content-type': 'application/sdp',
        content: this.sdp(d, [{ codec: mine.codec, payloadType: mine.payloadType }], answerDirection(mine)),
      });
      return;
    }
    if (d.progress !== 'none') return;
    d.progress = 'ringing';
    this.respond(d.invite, 180, 'Ringing', { to: d.local, contact: [this.contact(d.transport)] });
  }

  /** The 200 with the SDP answer (or, to a late offer, the offer), sent again until the ACK (over UDP). */
  private answer(d: Dialog): void {
    const rq = d.invite!;
    const media = d.rtp.media;
    const content = media
      ? this.sdp(d, [{ codec: media.codec, payloadType: media.payloadType }], answerDirection(media))
      : this.sdp(d, OFFERED_CODECS, 'sendrecv');
    const rs = sip.makeResponse(rq, 200, 'OK', {
      headers: {
        to: d.local,
        contact: [this.contact(d.transport)],
        'content-type': 'application/sdp',
        allow: ALLOW,
        server: AGENT,
        ...(d.routes.length ? { 'record-route': d.routes } : {}),
      },
      content,
    });
    d.state = 'confirmed';
    this.stack?.send(rs);
    sipMetrics.responses.inc({ method: 'INVITE', status: '200', direction: 'sent' });
    if (d.transport === 'UDP') {
      let wait = T1;
      let waited = 0;
      const again = () => {
        waited += wait;
        if (waited > 64 * T1) {
          // no ACK ever came: the call is not there (RFC 3261 §13.3.1.4)
          d.retransmit = null;
          this.o.log.warn({ sipCallId: d.callId }, 'no ACK for the 200 of an INVITE: hanging up');
          this.hangupDialog(d, 'provider_error');
          return;
        }
        this.stack?.send(rs);
        wait = Math.min(wait * 2, T2);
        d.retransmit = setTimeout(again, wait);
      };
      d.retransmit = setTimeout(again, wait);
    }
  }

  private canceled(d: Dialog | undefined, rq: SipRequest): void {
    if (d?.direction !== 'inbound' || d.state !== 'early') {
      this.respond(rq, 481, 'Call/Transaction Does Not Exist');
      return;
    }
    this.respond(rq, 200, 'OK');
    d.canceled = true;
    this.respond(d.invite!, 487, 'Request Terminated', { to: d.local });
    d.state = 'ended';
    this.o.log.info({ sipCallId: d.callId }, 'inbound SIP call canceled while ringing');
    if (d.leg) this.endLeg(d, 'remote_hangup', 'the caller hung up while it rang');
    const other = d.bridgedTo;
    this.endDialog(d);
    // the far leg of a bridge still ringing is cancelled too: its final answer (487) settles it
    if (other?.state === 'early') this.cancel(other);
  }

  /**
   * A re-INVITE: a hold, a resume, a new address, or a session refresh. With SDP it is an offer, answered in the 200;
   * without, the 200 offers what the call has and the ACK answers.
   */
  private reinvite(d: Dialog, rq: SipRequest): void {
    if (d.state === 'ended') {
      this.respond(rq, 481, 'Call/Transaction Does Not Exist');
      return;
    }
    const current = d.rtp.media;
    let content: string;
    if (hasSdp(rq)) {
      // the codec chosen at the start stays, when the new offer still has it
      const media = readRemoteSdp(rq.content ?? '', current?.codec);
      if (!media) {
        this.respond(rq, 488, 'Not Acceptable Here');
        return;
      }
      d.rtp.setRemote(media);
      d.sdpVersion++;
      content = this.sdp(d, [{ codec: media.codec, payloadType: media.payloadType }], answerDirection(media));
    } else {
      d.awaitingAnswer = 'update';
      content = current
        ? this.sdp(d, [{ codec: current.codec, payloadType: current.payloadType }], 'sendrecv')
        : this.sdp(d, OFFERED_CODECS, 'sendrecv');
    }
    const contact = Array.isArray(rq.headers.contact) ? rq.headers.contact[0] : undefined;
    if (contact) d.target = sip.stringifyUri(contact.uri);
    this.respond(rq, 200, 'OK', { to: rq.headers.to, contact: [this.contact(d.transport)], 'content-type': 'application/sdp', content });
  }

  /**
   * An ACK: the 200 it acknowledges stops being sent again, and where that 200 carried an offer the ACK carries the
   * answer. A late offer answered with no usable audio ends the call (there is no other way to refuse it).
   */
  private acked(d: Dialog, rq: SipRequest): void {
    if (d.retransmit) {
      clearTimeout(d.retransmit);
      d.retransmit = null;
    }
    const awaiting = d.awaitingAnswer;
    if (!awaiting) return;
    d.awaitingAnswer = null;
    const media = hasSdp(rq) ? readRemoteSdp(rq.content ?? '') : null;
    if (media) {
      d.rtp.setRemote(media);
      return;
    }
    if (awaiting === 'update' && !hasSdp(rq)) return;
    this.o.log.info({ sipCallId: d.callId }, 'the ACK answered the offer without G.711 audio: hanging up');
    this.hangupDialog(d, 'provider_error');
  }

  private info(d: Dialog, rq: SipRequest): void {
    const type = String(rq.headers['content-type'] ?? '').toLowerCase();
    const body = rq.content ?? '';
    const signal = type.includes('dtmf-relay')
      ? /Signal\s*=\s*([0-9*#A-D])/i.exec(body)?.[1]
      : type.includes('application/dtmf')
        ? body.trim()[0]
        : undefined;
    if (signal && d.leg) d.leg.digit(signal.toUpperCase());
  }

  // ---- in-dialog ----------------------------------------------------------------------------------------

  private remoteBye(d: Dialog): void {
    const other = d.bridgedTo;
    if (d.leg && !d.leg.ended) this.endLeg(d, 'remote_hangup', 'the far end hung up');
    this.endDialog(d);
    // a bridge still ringing is cancelled: its final answer (487) settles it, and its RTP port is closed then
    if (other?.state === 'early') this.cancel(other);
    else if (other && other.state !== 'ended') {
      this.sendInDialog(other, 'BYE');
      if (other.leg && !other.leg.ended) this.endLeg(other, 'remote_hangup', 'the bridged party hung up');
      this.endDialog(other);
    }
  }

  /** Sends an in-dialog request (BYE, REFER); `onResponse` gets its final answer. */
  private sendInDialog(d: Dialog, method: string, extra: Record<string, unknown> = {}, onResponse?: (rs: SipResponse) => void): void {
    this.sendRequest(
      {
        method,
        uri: d.target,
        headers: {
          to: d.remote,
          from: d.local,
          'call-id': d.callId,
          cseq: { seq: ++d.cseq, method },
          via: [],
          'max-forwards': 70,
          contact: [this.contact(d.transport)],
          ...(d.routes.length ? { route: d.routes } : {}),
          ...extra,
        },
      },
      (rs) => {
        if (rs.status >= 200) {
          sipMetrics.responses.inc({ method, status: String(rs.status), direction: 'received' });
          onResponse?.(rs);
        }
      },
    );
  }

  private hangupDialog(d: Dialog, reason: 'local_hangup' | 'host_lost' | 'provider_error'): void {
    if (d.state === 'confirmed') this.sendInDialog(d, 'BYE');
    else if (d.state === 'early' && d.direction === 'outbound') this.cancel(d);
    else if (d.state === 'early' && d.invite) {
      // a caller no trunk URI took hears the last URI's failure (docs/sip.md#sip-trunks); otherwise 480
      const { status, reason: phrase } = callerRefusal(d.bridgeFailure);
      this.respond(d.invite, status, phrase, { to: d.local });
    }
    const legReason = reason === 'host_lost' ? 'local_hangup' : reason;
    if (d.leg && !d.leg.ended) {
      if (d.direction === 'outbound' && d.state === 'early') this.failLeg(d, 'provider_error', 'the call was ended before it was answered');
      else this.endLeg(d, legReason, reason === 'host_lost' ? 'the server shut down' : null);
    }
    const other = d.bridgedTo;
    this.endDialog(d);
    // a bridge still ringing is cancelled: its final answer (487) settles it
    if (other?.state === 'early') this.cancel(other);
    else if (other && other.state !== 'ended') this.hangupDialog(other, 'local_hangup');
  }

  // ---- transfers and bridges ----------------------------------------------------------------------------

  /**
   * Cold transfer (docs/sip.md#transfers): a REFER asks the far end to call `to`; when it refuses REFER, the
   * platform calls `to` itself through the carrier and bridges the two (the caller id then follows the trunk's
   * `transfer_caller_id`: the caller's number, or the platform's).
   */
  private async transfer(d: Dialog, to: string, callerIdRule: 'transferee' | 'transferor'): Promise<void> {
    if (d.state !== 'confirmed') throw new TelephonyError('the call is not connected', false);
    const carrier = d.carrier?.outbound ? d.carrier : await this.outboundCarrier(null);
    const target =
      to.startsWith('sip:') || to.startsWith('sips:')
        ? to
        : carrier?.outbound
          ? `sip:${toCarrier(to, carrier.numberFormat)}@${carrier.outbound.host}:${carrier.outbound.port}`
          : null;
    if (!target) throw new TelephonyError('no carrier has an outbound gateway to transfer through', false);
    const refused = await new Promise<SipResponse | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        d.refer = null;
        reject(new TelephonyError('the far end did not report the transfer within 30 s', true));
      }, REFER_TIMEOUT_MS);
      d.refer = {
        resolve: () => {
          clearTimeout(timer);
          resolve(null);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
        timer,
      };
      this.sendInDialog(
        d,
        'REFER',
        { 'refer-to': { uri: target, params: {} }, 'referred-by': `<${sip.stringifyUri(d.local.uri)}>` },
        (rs) => {
          if (rs.status < 300) return; // accepted: the NOTIFYs tell the outcome
          clearTimeout(timer);
          d.refer = null;
          resolve(rs);
        },
      );
    });
    if (!refused) {
      // the far end is connected to the target: this call is over
      this.endLeg(d, 'transferred', `transferred to ${to} by REFER`);
      this.sendInDialog(d, 'BYE');
      this.endDialog(d);
      return;
    }
    this.o.log.info({ sipCallId: d.callId, status: refused.status }, 'REFER refused: the platform calls the target and bridges');
    // the target sees the far end's number (transferee) or the platform's (transferor), as the trunk's rule says
    await this.bridgeCall(d, carrier, target, this.partyNumber(d, callerIdRule === 'transferee' ? 'remote' : 'local'));
    this.endLeg(d, 'transferred', `transferred to ${to} (bridged: the far end refused REFER with ${refused.status})`);
  }

  /** A party of the dialog as a number: E.164 when its carrier's format reads one, else the URI's user part. */
  private partyNumber(d: Dialog, party: 'remote' | 'local'): string {
    const user = uriUser((party === 'remote' ? d.remote : d.local).uri);
    if (!user) return 'anonymous';
    return fromCarrier(user, d.carrier?.numberFormat ?? DEFAULT_NUMBER_FORMAT) ?? user;
  }

  /**
   * Bridges `d` to an origination URI of a SIP trunk (docs/sip.md#sip-trunks, docs/calls.md#sip-trunks): rejects with a
   * `SipBridgeError` saying why the URI did not take the call, which the session's failover rule reads. A URI over a
   * transport this engine does not run (TLS, or one not in SIP_TRANSPORTS) is unreachable; one that does not respond
   * within `trunkTimeouts.respondMs`, or responds and does not answer within `trunkTimeouts.answerMs`, times out.
   */
  private async bridgeTrunkUri(d: Dialog, sipUri: string): Promise<void> {
    const early = d.state === 'early';
    try {
      await this.tryTrunkUri(d, sipUri);
    } catch (err) {
      if (err instanceof SipBridgeError) d.bridgeFailure = err.failure;
      throw err;
    }
    // the caller was answered when the URI answered (bridgeCall): the session hears of it now
    if (early) d.leg?.answered('human');
  }

  private async tryTrunkUri(d: Dialog, sipUri: string): Promise<void> {
    // the package answers undefined for what is not a SIP URI (its type says otherwise)
    const uri = sip.parseUri(sipUri) as ReturnType<typeof sip.parseUri> | undefined;
    if (!uri) throw new SipBridgeError(sipUri, { kind: 'unreachable', detail: 'not a SIP URI' });
    const transport = uri.schema === 'sips' ? 'tls' : String(uri.params.transport ?? 'udp').toLowerCase();
    const runs = (transport === 'udp' && this.o.udp) || (transport === 'tcp' && this.o.tcp);
    if (!runs)
      throw new SipBridgeError(sipUri, { kind: 'unreachable', detail: `${transport.toUpperCase()} is not a transport this engine runs` });
    await this.bridgeCall(d, null, sipUri, this.partyNumber(d, 'remote'), { trunk: this.o.trunkTimeouts });
  }

  /**
   * Calls `target` and, once it answers, relays audio between it and `d`; rejects with the target's failure. The
   * call shows `caller` (E.164, written as the target's carrier writes numbers, or a user part as it is). With
   * `trunk` timeouts the target is an origination URI of a SIP trunk: its failures are `SipBridgeError`s, and it is
   * given up (CANCEL once it responded) when it does not respond or answer in time.
   */
  private bridgeCall(
    d: Dialog,
    carrier: Carrier | null,
    target: string,
    caller: string,
    o: Readonly<{ trunk?: SipEngineOptions['trunkTimeouts'] }> = {},
  ): Promise<Dialog> {
    const trunk = o.trunk;
    return new Promise<Dialog>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | null = null;
      const settle = (f: () => void) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        f();
      };
      const viaCarrier = carrier?.outbound && target.includes(`@${carrier.outbound.host}`);
      const callerUser = viaCarrier && caller.startsWith('+') ? toCarrier(caller, carrier!.numberFormat) : caller;
      const uri = sip.parseUri(target);
      this.invite({
        carrier: viaCarrier ? carrier : null,
        target,
        transport: String(uri.params.transport ?? 'udp').toLowerCase() === 'tcp' ? 'TCP' : 'UDP',
        from: `sip:${callerUser}@${this.o.publicAddress}`,
        to: target.split(';')[0]!,
        credentials:
          viaCarrier && carrier!.outbound!.username && carrier!.outbound!.password
            ? { user: carrier!.outbound!.username, password: carrier!.outbound!.password }
            : null,
        log: { callId: d.leg?.toString() ?? d.callId, to: target },
      }).then((b) => {
        d.bridgedTo = b;
        b.bridgedTo = d;
        // the caller went while the INVITE was being sent: it is cancelled, and its 487 settles this as the caller's end
        if (d.state === 'ended') this.cancel(b);
        // a caller not answered yet hears the far end ring, or its early media (docs/sip.md#sip-trunks)
        b.onRinging = (rs) => {
          if (!settled) this.passProgress(d, b, rs);
        };
        if (trunk) {
          // given up: CANCEL once it responded (RFC 3261 §9.1); a 2xx that still comes is answered with a BYE
          const giveUp = (afterMs: number) => () =>
            settle(() => {
              if (b.state === 'early' && b.onProvisional === null) this.cancel(b);
              else b.canceled = true;
              reject(new SipBridgeError(target, { kind: 'timeout', afterMs }));
            });
          timer = setTimeout(giveUp(trunk.respondMs), trunk.respondMs);
          b.onProvisional = () => {
            if (settled) return;
            b.onProvisional = null;
            if (timer) clearTimeout(timer);
            timer = setTimeout(giveUp(trunk.answerMs), trunk.answerMs);
          };
        }
        b.onFinal = (rs) => {
          if (rs.status >= 300) {
            b.rtp.close();
            if (d.bridgedTo === b) d.bridgedTo = null;
            settle(() =>
              reject(
                // the answer to the engine's own CANCEL, sent because the caller went: the caller's end is the call's
                b.canceled && (d.state === 'ended' || d.leg?.ended)
                  ? new LegEndedError(`the caller hung up while ${target} rang (${rs.status} ${rs.reason})`)
                  : trunk
                    ? new SipBridgeError(target, { kind: 'response', status: rs.status, reason: rs.reason })
                    : new BridgeRefused(target, rs.status, rs.reason),
              ),
            );
            return;
          }
          if (d.state === 'ended' || d.canceled || settled) {
            this.hangupDialog(b, 'local_hangup');
            settle(() => reject(new LegEndedError('the caller hung up before the bridge answered')));
            return;
          }
          settle(() => {
            // a caller still ringing is answered now that the far end has (docs/sip.md#calls-from-your-pbx)
            if (d.state === 'early') this.answer(d);
            d.leg?.stopListening();
            // a recorded call keeps what is relayed, both ways, from the answer on (docs/sip.md#recording-bridged-calls)
            const rec = d.record ? new BridgeRecorder() : null;
            d.recorder = rec;
            d.rtp.onAudio = (s) => {
              b.rtp.relay(s);
              rec?.caller(s);
            };
            b.rtp.onAudio = (s) => {
              d.rtp.relay(s);
              rec?.far(s);
            };
            // keypad tones pass through as RFC 4733 events, to a far end that takes them (docs/sip.md#sip-trunks)
            const passOn = (to: Dialog) => (digit: string) =>
              void to.rtp
                .sendDigits(digit)
                .catch((err: unknown) => this.o.log.info({ err, sipCallId: to.callId }, 'a keypad tone was not passed on'));
            d.rtp.onDigit = passOn(b);
            b.rtp.onDigit = passOn(d);
            resolve(b);
          });
        };
      }, reject);
    });
  }

  private notify(d: Dialog, rq: SipRequest): void {
    if (!d.refer || !/^refer/i.test(String(rq.headers.event ?? ''))) return;
    const status = Number(/^SIP\/2\.0\s+(\d{3})/.exec(rq.content ?? '')?.[1] ?? 0);
    if (status >= 200 && status < 300) {
      const r = d.refer;
      d.refer = null;
      r.resolve();
    } else if (status >= 300) {
      const r = d.refer;
      d.refer = null;
      r.reject(new TelephonyError(`the transfer target answered ${status}`, false));
    }
  }

  // ---- helpers --------------------------------------------------------------------------------------------

  /**
   * The leg of an accepted offer, handed to the platform; null (and the leg ended `remote_hangup`, `gone` saying
   * why) when the far end gave the call up meanwhile.
   */
  private attachLeg(d: Dialog, decision: Extract<InboundDecision, { accept: true }>, gone: string): SipLeg | null {
    const leg = this.makeLeg(d, decision.callId, decision.listener);
    d.record = decision.record === true;
    decision.onLeg(leg);
    if (!d.canceled) return leg;
    leg.end('remote_hangup', gone);
    return null;
  }

  private makeLeg(d: Dialog, callId: string, listener: LegListener): SipLeg {
    const leg = new SipLeg(
      d.callId,
      callId,
      d.rtp,
      listener,
      {
        transfer: (to, callerId) => this.transfer(d, to, callerId),
        bridge: (sipUri) => this.bridgeTrunkUri(d, sipUri),
        hangup: () => this.hangupDialog(d, 'local_hangup'),
        bridgedAudio: () => d.recorder?.wav() ?? null,
      },
      this.o.log,
      this.o.speech,
    );
    d.leg = leg;
    return leg;
  }

  private endLeg(d: Dialog, reason: 'remote_hangup' | 'local_hangup' | 'transferred' | 'provider_error', detail: string | null): void {
    const leg = d.leg;
    if (!leg || leg.ended) return;
    const stats = leg.end(reason, detail);
    this.o.log.info({ sipCallId: d.callId, reason, media: stats }, 'SIP call ended');
  }

  private failLeg(d: Dialog, reason: DialFailure, detail: string): void {
    d.leg?.failed(reason, detail);
    this.endDialog(d);
  }

  private endDialog(d: Dialog): void {
    d.state = 'ended';
    if (d.retransmit) clearTimeout(d.retransmit);
    d.retransmit = null;
    if (d.refer) {
      clearTimeout(d.refer.timer);
      d.refer.reject(new TelephonyError('the call ended', false));
      d.refer = null;
    }
    d.rtp.close();
    this.forget(d);
  }

  /** A dialog in its early state, with a local tag of its own, tracked from now on. */
  private newDialog(
    o: Pick<
      Dialog,
      | 'callId'
      | 'direction'
      | 'carrier'
      | 'remoteTag'
      | 'local'
      | 'remote'
      | 'target'
      | 'routes'
      | 'transport'
      | 'rtp'
      | 'invite'
      | 'awaitingAnswer'
    >,
  ): Dialog {
    const d: Dialog = {
      ...o,
      state: 'early',
      localTag: tag(),
      cseq: randomInt(1, 10_000),
      sdpSession: randomInt(1, 2 ** 31),
      sdpVersion: 1,
      leg: null,
      retransmit: null,
      sentInvite: null,
      bridgedTo: null,
      refer: null,
      onFinal: null,
      onProvisional: null,
      onRinging: null,
      progress: 'none',
      bridgeFailure: null,
      record: false,
      recorder: null,
      canceled: false,
    };
    d.local.params.tag = d.localTag;
    this.track(d);
    return d;
  }

  private track(d: Dialog): void {
    this.dialogs.set(d.callId, d);
    sipMetrics.activeCalls.set(this.dialogs.size);
  }

  private forget(d: Dialog): void {
    if (this.dialogs.get(d.callId) === d) this.dialogs.delete(d.callId);
    sipMetrics.activeCalls.set(this.dialogs.size);
  }

  private async openRtp(callId: string, trusted: string[]): Promise<RtpSession> {
    const socket = await this.o.rtpPorts.bind(this.o.rtpAddress);
    return new RtpSession(socket, this.clock, this.o.log, callId, trusted);
  }

  private sdp(
    d: Dialog,
    codecs: readonly { codec: RemoteMedia['codec']; payloadType: number }[],
    direction: 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive',
  ): string {
    const dtmf = d.rtp.media ? d.rtp.media.dtmfPayloadType : OUR_DTMF_PAYLOAD;
    return writeSdp({
      address: this.o.publicAddress,
      port: d.rtp.port,
      sessionId: d.sdpSession,
      version: d.sdpVersion,
      codecs,
      dtmfPayloadType: dtmf,
      direction,
    });
  }

  contact(transport: 'UDP' | 'TCP'): NameAddr {
    return { uri: `sip:agent@${this.o.publicAddress}:${this.o.port}${transport === 'TCP' ? ';transport=tcp' : ''}`, params: {} };
  }

  respond(rq: SipRequest, status: number, reason: string, headers: Record<string, unknown> = {}): void {
    const { content, ...rest } = headers;
    this.stack?.send(sip.makeResponse(rq, status, reason, { headers: { server: AGENT, ...rest }, content: content as string | undefined }));
    if (status >= 200) sipMetrics.responses.inc({ method: rq.method, status: String(status), direction: 'sent' });
  }

  /** A message the package could not take (docs/sip.md#bad-input): counted, and logged once a second per source. */
  private dropped(reason: DropReason, source: { protocol: string; address: string; port: number; bytes: number }): void {
    sipMetrics.dropped.inc({ reason });
    const second = Math.floor(Date.now() / 1000);
    const key = `${source.address}:${reason}`;
    if (this.droppedLogged.get(key) === second) return;
    if (this.droppedLogged.size > 10_000) this.droppedLogged.clear();
    this.droppedLogged.set(key, second);
    this.o.log.warn({ reason, ...source }, 'SIP message dropped: it is no SIP message the engine can read');
  }

  /** Sends a request outside any dialog (REGISTER). */
  request(rq: SipRequest, onResponse: (rs: SipResponse) => void): void {
    this.sendRequest(rq, onResponse);
  }

  private sendRequest(rq: SipRequest, onResponse?: (rs: SipResponse) => void): void {
    this.stack?.send(this.routed(rq), onResponse);
  }

  /**
   * A request whose next hop is on this engine's own public address (a phone or PBX on the same host, or behind the
   * same NAT) gets a first Route of the `sip` package's own flow-token form: the package takes any URI on its own
   * address for a flow token of its own and would answer such a request 404 itself. The flow names the hop's
   * address and port; the package removes that Route before the request goes out, and the Request-URI stays the
   * far end's.
   */
  private routed(rq: SipRequest): SipRequest {
    const stack = this.stack;
    const routes = (rq.headers.route as NameAddr[] | undefined) ?? [];
    const hop = sip.parseUri(routes[0]?.uri ?? rq.uri);
    if (!stack || hop.host !== this.o.publicAddress) return rq;
    const protocol = String(hop.params.transport ?? 'udp').toUpperCase() === 'TCP' ? 'TCP' : 'UDP';
    const flow = stack.encodeFlowUri({
      protocol,
      address: hop.host,
      port: hop.port ?? 5060,
      local: { address: this.o.address, port: this.o.port },
    });
    return { ...rq, headers: { ...rq.headers, route: [{ uri: flow, params: {} }, ...routes] } };
  }

  get publicAddress(): string {
    return this.o.publicAddress;
  }

  /**
   * A carrier that authenticates by digest instead of by address (docs/sip.md#carriers), or a PBX sending calls
   * out with its SIP trunk's credentials (docs/sip.md#calls-from-your-pbx): the INVITE is challenged, then its
   * credentials checked against the carriers' and the trunks' (`InboundDigest`). The challenge is a 401 while only
   * carriers authenticate by digest, else a 407 (a carrier's equipment answers either).
   */
  private byCredentials(
    carriers: readonly Carrier[],
    trunks: readonly TrunkTermination[],
    rq: SipRequest,
    remote: Remote,
  ): { carrier: Carrier } | { trunks: readonly TrunkTermination[] } | 'challenged' | null {
    const trunkCredentials = trunks.some((t) => t.credentials.length > 0);
    if (!carriers.some((c) => c.inbound.username && c.inbound.password) && !trunkCredentials) return null;
    const verdict = this.digest.verify(rq, carriers, trunks);
    if ('carrier' in verdict || 'trunks' in verdict) return verdict;
    if ('challenge' in verdict) {
      if (!this.stranger(remote.address, 'challenge')) return 'challenged';
      const challenge = [this.digest.challenge(verdict.stale)];
      if (trunkCredentials) this.respond(rq, 407, 'Proxy Authentication Required', { 'proxy-authenticate': challenge });
      else this.respond(rq, 401, 'Unauthorized', { 'www-authenticate': challenge });
      return 'challenged';
    }
    this.o.log.warn({ source: remote.address, reason: verdict.refused }, 'SIP INVITE with digest credentials refused');
    return null;
  }

  /**
   * Whether to answer a request from a source that is no carrier yet (a 403, or a digest challenge): at most
   * STRANGER_ANSWERS_PER_SECOND a second per source; beyond, a flood is dropped, with one log line a second.
   */
  private stranger(address: string, answer: '403' | 'challenge' = '403'): boolean {
    const second = Math.floor(Date.now() / 1000);
    const s = this.strangers.get(address);
    if (!s || s.second !== second) {
      if (this.strangers.size > 10_000) this.strangers.clear();
      this.strangers.set(address, { second, count: 1, warned: false });
      if (answer === '403') this.o.log.warn({ source: address }, 'SIP INVITE from a source that is no carrier: 403');
      return true;
    }
    s.count++;
    if (s.count <= STRANGER_ANSWERS_PER_SECOND) return true;
    sipMetrics.dropped.inc({ reason: 'not_a_carrier_flood' });
    if (!s.warned) {
      s.warned = true;
      this.o.log.warn({ source: address }, 'a flood of SIP INVITEs from a source that is no carrier: dropping the rest of this second');
    }
    return false;
  }

  /** The trunks' termination sides, as read at most CARRIER_REFRESH_MS ago (a change through the API is taken up by then). */
  private async trunks(): Promise<readonly TrunkTermination[]> {
    if (this.trunkCache && Date.now() - this.trunkCache.at < CARRIER_REFRESH_MS) return this.trunkCache.list;
    const list = await this.o.trunks.list();
    this.trunkCache = { at: Date.now(), list };
    return list;
  }

  /** The carriers, as read at most CARRIER_REFRESH_MS ago (a change through the operator API is taken up by then). */
  private async carriers(): Promise<readonly Carrier[]> {
    if (this.carrierCache && Date.now() - this.carrierCache.at < CARRIER_REFRESH_MS) return this.carrierCache.list;
    return this.refreshCarriers();
  }

  /**
   * Reads the carriers again and brings the registrations in line (docs/sip.md#carriers): a carrier that asks for
   * REGISTER gets one, one whose gateway or credentials changed registers again, one gone or no longer asking
   * unregisters.
   */
  private async refreshCarriers(): Promise<readonly Carrier[]> {
    const list = await this.o.carriers.list();
    this.carrierCache = { at: Date.now(), list };
    if (!this.stack) return list;
    const wanted = new Map(list.filter((c) => c.outbound?.register).map((c) => [c.id, c] as const));
    for (const [id, { settings, registration }] of this.registrations) {
      const c = wanted.get(id);
      if (c && JSON.stringify(c.outbound) === settings) continue;
      registration.stop();
      this.registrations.delete(id);
    }
    for (const [id, c] of wanted) {
      if (this.registrations.has(id)) continue;
      const registration = new Registration(this, c, this.o.log);
      this.registrations.set(id, { settings: JSON.stringify(c.outbound), registration });
      registration.start();
    }
    return list;
  }

  private async outboundCarrier(fromE164: string | null): Promise<Carrier | null> {
    const carriers = await this.carriers();
    const id = fromE164 ? await this.o.carrierOfNumber(fromE164) : null;
    return carriers.find((c) => c.id === id && c.outbound) ?? carriers.find((c) => c.outbound) ?? null;
  }
}

/** Whether a request carries a session description (a body of type application/sdp, or an untyped one). */
function hasSdp(rq: SipRequest): boolean {
  if (!rq.content || rq.content.trim() === '') return false;
  const type = String(rq.headers['content-type'] ?? 'application/sdp').toLowerCase();
  return type.startsWith('application/sdp');
}

function answerDirection(m: RemoteMedia): 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive' {
  if (m.sending && m.receiving) return 'sendrecv';
  if (m.sending) return 'recvonly';
  if (m.receiving) return 'sendonly';
  return 'inactive';
}

/** How a refused inbound offer is answered (docs/sip.md#inbound-calls). */
function refusal(code: InboundRefusal | undefined): [number, string] {
  switch (code) {
    case 'unknown_number':
      return [404, 'Not Found'];
    case 'busy':
      return [486, 'Busy Here'];
    default:
      return [480, 'Temporarily Unavailable'];
  }
}
type InboundRefusal = Extract<InboundDecision, { accept: false }>['code'];

/** why a call from a PBX is refused when its From is no number of the trunk (docs/sip.md#calls-from-your-pbx) */
const CALLER_ID_REFUSED = 'the caller id (From) must be a number of the account routed to this SIP trunk';

/** The E.164 number of a URI's user part (a PBX writes numbers as E.164, or national with the default country code). */
function e164Of(user: string | null): string | null {
  if (!user) return null;
  try {
    return fromCarrier(user, DEFAULT_NUMBER_FORMAT);
  } catch {
    return null; // a user part that is no valid percent-encoding
  }
}

/** How a refused call from a PBX is answered (docs/sip.md#calls-from-your-pbx). */
function pbxRefusal(code: InboundRefusal | undefined): [number, string, Record<string, unknown>] {
  switch (code) {
    case 'forbidden':
      return [403, 'Forbidden', { warning: `399 - "${CALLER_ID_REFUSED}"` }];
    case 'busy':
      // a cap of the account or the number is full: the PBX may try another route, or again later
      return [503, 'Service Unavailable', { 'retry-after': 30, warning: '399 - "a call limit of the account or number is reached"' }];
    default:
      return [503, 'Service Unavailable', {}];
  }
}

/**
 * A carrier's refusal of a call from a PBX, as the PBX is answered: its own status, except a challenge the engine
 * could not answer (the carrier's credentials are the operator's, not the PBX's) and a redirect, which the PBX
 * cannot follow through the platform.
 */
function toPbx(status: number, reason: string): [number, string] {
  if (status === 401 || status === 407) return [503, 'Service Unavailable'];
  if (status < 400) return [480, 'Temporarily Unavailable'];
  return [status, reason || 'Refused'];
}

/** A bridge's far end refused the call with a final response. */
class BridgeRefused extends TelephonyError {
  constructor(
    target: string,
    readonly status: number,
    readonly reason: string,
  ) {
    super(`${target} answered ${status} ${reason}`, false);
    this.name = 'BridgeRefused';
  }
}

/** What a failed dial's final answer means for the call record (docs/sip.md#outbound-calls). */
export function dialFailure(rs: Pick<SipResponse, 'status' | 'reason'>): [DialFailure, string] {
  const detail = `${rs.status} ${rs.reason}`.trim();
  if (rs.status === 486 || rs.status === 600) return ['busy', detail];
  if (rs.status === 408 || rs.status === 480 || rs.status === 487) return ['no_answer', detail];
  if (rs.status === 404 || rs.status === 484 || rs.status === 604) return ['invalid_number', detail];
  return ['provider_error', detail];
}

/** A REGISTER with a carrier's gateway, refreshed before it expires (docs/sip.md#carriers). */
class Registration {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private cseq = 1;
  private readonly callId = `${randomBytes(10).toString('hex')}@reg`;
  private readonly fromTag = tag();

  constructor(
    private readonly engine: SipEngine,
    private readonly carrier: Carrier,
    private readonly log: LoggerPort,
  ) {}

  start(): void {
    this.send(this.carrier.outbound!.registerExpiresSeconds, null);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.send(0, null);
  }

  private send(expires: number, challenge: SipResponse | null): void {
    const gw = this.carrier.outbound!;
    const aor = `sip:${gw.username ?? 'agent'}@${gw.host}`;
    const rq: SipRequest = {
      method: 'REGISTER',
      uri: `sip:${gw.host}:${gw.port}${gw.transport === 'tcp' ? ';transport=tcp' : ''}`,
      headers: {
        to: { uri: aor, params: {} },
        from: { uri: aor, params: { tag: this.fromTag } },
        'call-id': this.callId,
        cseq: { seq: this.cseq++, method: 'REGISTER' },
        contact: [this.engine.contact(gw.transport === 'tcp' ? 'TCP' : 'UDP')],
        expires,
        via: [],
        'max-forwards': 70,
        'user-agent': AGENT,
      },
    };
    if (challenge && gw.username && gw.password) digest.signRequest(null, rq, challenge, { user: gw.username, password: gw.password });
    this.engine.request(rq, (rs) => {
      if (rs.status < 200 || expires === 0) return;
      if ((rs.status === 401 || rs.status === 407) && !challenge && gw.username && gw.password) {
        this.send(expires, rs);
        return;
      }
      if (rs.status >= 300) {
        this.log.warn({ carrier: this.carrier.id, status: rs.status }, 'REGISTER refused; trying again in 30 s');
        this.later(30);
        return;
      }
      const granted = Number(rs.headers.expires ?? expires) || expires;
      this.log.info({ carrier: this.carrier.id, expires: granted }, 'registered with the carrier');
      this.later(Math.max(30, Math.floor(granted * 0.8)));
    });
  }

  private later(seconds: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.send(this.carrier.outbound!.registerExpiresSeconds, null), seconds * 1000);
    this.timer.unref();
  }
}

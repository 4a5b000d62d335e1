import type { CallCommand } from '../../domain/call/call.decider.js';
import { callDecider } from '../../domain/call/call.decider.js';
import {
  type AgentTurnSource,
  type AnsweredBy,
  type CallSettings,
  callStream,
  type DisconnectionReason,
  type TurnAction,
  type TurnLatency,
} from '../../domain/call/call.js';
import { bargeInDelayMs, isBackchannel, isScreenerHold } from '../../domain/call/turn-taking.js';
import { DomainError } from '../../domain/shared/errors.js';
import { afterBridgeFailure, describeBridgeFailure } from '../../domain/sip-trunk/routing.js';
import type { ClockPort } from '../ports/clock.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import type { RecordingStore } from './recordings.port.js';
import type { CallFacts, HistoryEntry, ReplySource } from './replies.js';
import { SilentTurn } from './replies.js';
import type { CallerSpeech, CallLeg, DialFailure, AnsweredBy as EngineAnsweredBy, LegEndReason, LegListener } from './voice-engine.port.js';
import { LegEndedError, SipBridgeError } from './voice-engine.port.js';

/** One agent turn while it is generated and spoken. */
type AgentTurn = {
  turnId: string;
  source: AgentTurnSource;
  replyTo: string | null;
  /** playback ids in order, with their text */
  pieces: { id: string; text: string }[];
  /** pieces still playing or queued */
  pending: Set<string>;
  /** words heard of pieces that were cut */
  heard: Map<string, string>;
  generating: boolean;
  interrupted: boolean;
  silentReason: string | null;
  actions: TurnAction[];
  wanted: { type: 'transfer' | 'end_call' | 'digits'; value: string | null }[];
  abort: AbortController;
  /** performance.now() marks for the latency split, and the steps the engine measured itself (docs/calls.md#latency) */
  marks: {
    speechEnd: number | null;
    request: number | null;
    firstByte: number | null;
    speechStart: number | null;
    recognitionMs: number | null;
    synthesisMs: number | null;
  };
  startedAt: string;
  done: boolean;
};

export type SessionDeps = Readonly<{
  exec: CommandExecutor;
  clock: ClockPort;
  ids: IdsPort;
  log: LoggerPort;
  replies: ReplySource;
  /** frees the call's slots and forgets the session (the host) */
  onEnded: (callId: string) => void;
  /**
   * Whether a failed write may succeed when tried again (the database away, a concurrent writer): such a write is
   * tried again until it lands (docs/calls.md#the-live-session); default: any error that is not a domain decision
   */
  isTransient?: (err: unknown) => boolean;
  /** how long a fact is tried before it is given up (default 15 minutes) */
  retryForMs?: number;
  /** where a bridged call's audio is kept as its recording (docs/sip.md#recording-bridged-calls) */
  recordings?: RecordingStore;
}>;

const DIAL_REASON: Record<DialFailure, DisconnectionReason> = {
  busy: 'dial_busy',
  no_answer: 'dial_no_answer',
  invalid_number: 'invalid_destination',
  provider_error: 'telephony_error',
};
const LEG_REASON: Record<LegEndReason, DisconnectionReason> = {
  remote_hangup: 'user_hangup',
  local_hangup: 'agent_hangup',
  transferred: 'call_transfer',
  provider_error: 'telephony_error',
};

/**
 * One live call in this process (docs/calls.md#the-live-session): it listens to the engine's leg, records every
 * fact on the call's stream, asks the reply source for what to say, speaks it, and decides when speech from the
 * far end cuts the agent (barge-in) or is only a backchannel. Its writes are queued so they land in order; a write
 * refused because the call ended elsewhere (the API, the sweeper) hangs the line up.
 */
export class CallSession implements LegListener {
  private leg: CallLeg | null = null;
  private answeredBy: AnsweredBy | null = null;
  private readonly turns = new Map<string, AgentTurn>();
  private readonly owner = new Map<string, AgentTurn>();
  private readonly history: HistoryEntry[] = [];
  private writes: Promise<unknown> = Promise.resolve();
  private finished = false;
  private endReason: DisconnectionReason | null = null;
  private endDetail: string | null = null;
  private callerTurns = 0;
  private phase: 'dialing' | 'talking' | 'awaiting-beep' | 'leaving-message' | 'screening' | 'screened' | 'closing' = 'dialing';
  /** utterances heard while the agent spoke: whether each may still be a backchannel */
  private readonly overlapping = new Map<string, { backchannel: boolean }>();
  private bargeTimer: NodeJS.Timeout | null = null;
  private silenceTimer: NodeJS.Timeout | null = null;
  private maxTimer: NodeJS.Timeout | null = null;
  private resolveEnded!: () => void;
  /** resolves once the end of the call is recorded */
  readonly whenEnded: Promise<void> = new Promise((r) => {
    this.resolveEnded = r;
  });

  constructor(
    readonly call: CallFacts &
      Readonly<{
        agentName: string;
        settings: CallSettings;
        sipUris?: readonly string[];
        sipTrunkId?: string | null;
        pbxSource?: string | null;
      }>,
    private readonly ctx: RequestContext,
    private readonly deps: SessionDeps,
  ) {}

  get callId(): string {
    return this.call.callId;
  }

  attach(leg: CallLeg): void {
    this.leg = leg;
    // a call from the customer's PBX says first which trunk it came through, and from where (docs/sip.md#calls-from-your-pbx)
    if (this.call.pbxSource && !this.finished)
      this.record({ type: 'RecordBridge', data: { callId: this.callId, sipUri: this.call.pbxSource, failed: [], ...this.trunk() } });
    if (this.finished) void leg.hangup();
    // a call routed to a SIP trunk rings its URIs now; the caller is answered when one answers (docs/calls.md#sip-trunks)
    else if (this.call.settings.mode === 'sip' && this.call.direction === 'inbound') void this.bridge();
  }

  /** Hangs up for `reason` (the API, the host's shutdown, a limit); resolves once the end is recorded. */
  async hangup(reason: DisconnectionReason, detail: string | null = null): Promise<void> {
    if (!this.finished && this.endReason === null) {
      this.endReason = reason;
      this.endDetail = detail;
    }
    if (this.leg) await this.leg.hangup().catch(() => undefined);
    else this.finish(reason, detail);
    await this.whenEnded;
  }

  // ---- the engine's events ------------------------------------------------------------------------------

  ringing(): void {
    this.record({ type: 'RecordRinging', data: { callId: this.callId } });
  }

  answered(answeredBy: EngineAnsweredBy): void {
    this.answeredBy = answeredBy;
    this.record({ type: 'RecordAnswer', data: { callId: this.callId, answeredBy, engineCallId: this.leg?.engineCallId ?? '' } });
    const s = this.call.settings;
    this.maxTimer = setTimeout(() => void this.hangup('max_duration_reached'), s.maxDurationSeconds * 1000);
    this.touch();
    // a bridged call is answered when its far end is (docs/calls.md#sip-trunks, docs/sip.md#calls-from-your-pbx):
    // nobody speaks on it
    if (s.mode === 'sip') return;
    if (answeredBy === 'voicemail') {
      if (s.voicemailMessage) this.phase = 'awaiting-beep';
      else {
        this.phase = 'closing';
        void this.hangup('voicemail_reached', 'voicemail answered and the agent has no voicemailMessage');
      }
      return;
    }
    this.deps.replies.prepare?.();
    if (answeredBy === 'screener' && s.screeningPurpose) {
      this.phase = 'screening';
      return;
    }
    this.phase = 'talking';
    this.deps.replies.prepare?.();
    if (s.greeting) this.speakAlone('greeting', s.greeting);
  }

  failed(reason: DialFailure, detail: string): void {
    this.finish(DIAL_REASON[reason], detail);
  }

  beep(): void {
    if (this.phase !== 'awaiting-beep' || !this.call.settings.voicemailMessage) return;
    this.phase = 'leaving-message';
    this.speakAlone('voicemail', this.call.settings.voicemailMessage, [{ type: 'end_call', value: null }]);
  }

  /** A keypad tone from the far end: a fact of the call (docs/calls.md#the-call-record), and a sign of life. */
  digitReceived(digit: string): void {
    if (this.finished) return;
    this.touch();
    this.record({ type: 'RecordDigitsReceived', data: { callId: this.callId, digits: digit } });
  }

  callerSpeech(u: CallerSpeech): void {
    if (this.finished) return;
    this.touch();
    if (u.final && u.transcript.trim() === '') {
      // speech in which the recogniser found no words (a cough, noise) is not a turn; what it cut stays cut
      this.overlapping.delete(u.utteranceId);
      return;
    }
    const speaking = this.agentSpeaking();
    if (!u.final) {
      if (!speaking) return;
      const backchannel = this.call.settings.enableBackchannel && isBackchannel(u.transcript);
      this.overlapping.set(u.utteranceId, { backchannel });
      if (!backchannel) this.scheduleBargeIn();
      return;
    }
    const overlap = this.overlapping.get(u.utteranceId);
    this.overlapping.delete(u.utteranceId);
    if (speaking && this.call.settings.enableBackchannel && isBackchannel(u.transcript) && (overlap?.backchannel ?? true)) {
      // an acknowledgement while the agent talks: the agent goes on, and it is not a turn
      this.deps.log.debug({ callId: this.callId, transcript: u.transcript }, 'backchannel ignored');
      return;
    }
    if (speaking && bargeInDelayMs(this.call.settings.interruptionSensitivity) !== null) this.cut();
    this.callerTurn(u);
  }

  playbackStarted(playbackId: string, o: Readonly<{ synthesisMs: number | null }>): void {
    const turn = this.owner.get(playbackId);
    // the turn's first speech is the one its latency measures
    if (turn && turn.pieces[0]?.id === playbackId && turn.marks.synthesisMs === null) turn.marks.synthesisMs = o.synthesisMs;
  }

  playbackFinished(playbackId: string): void {
    const turn = this.owner.get(playbackId);
    if (!turn) return;
    this.owner.delete(playbackId);
    turn.pending.delete(playbackId);
    this.touch();
    this.settle(turn);
  }

  ended(reason: LegEndReason, detail: string | null): void {
    // speech that was still playing when the line went: what was heard so far is what was said
    if (this.agentSpeaking()) this.cut();
    for (const t of this.turns.values()) {
      if (t.generating && t.pieces.length === 0 && t.silentReason === null) t.silentReason = 'the call ended before the reply was spoken';
      t.abort.abort();
      t.generating = false;
      t.pending.clear();
      this.settle(t);
    }
    // a transfer's detail is the engine's: how it went through (by REFER, or bridged when the far end refused it)
    this.finish(this.endReason ?? LEG_REASON[reason], reason === 'transferred' && detail ? detail : (this.endDetail ?? detail));
  }

  /**
   * A number routed to a SIP trunk (docs/calls.md#sip-trunks): the call goes to its origination URIs in order; a URI's
   * failure passes to the next, ends the call as busy, or ends it, as `afterBridgeFailure` says. The URI that answered
   * and those passed over are recorded on the call either way.
   */
  private async bridge(): Promise<void> {
    const failed: { sipUri: string; error: string }[] = [];
    let end: { reason: 'dial_busy' | 'sip_unreachable'; detail: string } | null = null;
    for (const sipUri of this.call.sipUris ?? []) {
      if (this.finished || !this.leg) return;
      try {
        await this.leg.bridge(sipUri);
        this.record({ type: 'RecordBridge', data: { callId: this.callId, sipUri, failed, ...this.trunk() } });
        return;
      } catch (err) {
        if (this.finished || err instanceof LegEndedError) return;
        // anything but a URI's own failure (the engine refused the request) passes to the next URI too
        const failure = err instanceof SipBridgeError ? err.failure : null;
        failed.push({ sipUri, error: failure ? describeBridgeFailure(failure) : err instanceof Error ? err.message : String(err) });
        const then = failure ? afterBridgeFailure(failure) : 'next';
        if (then === 'busy') end = { reason: 'dial_busy', detail: `${sipUri} is busy (${describeBridgeFailure(failure!)})` };
        if (then === 'stop') end = { reason: 'sip_unreachable', detail: `${sipUri} refused the call (${describeBridgeFailure(failure!)})` };
        if (end) break;
      }
    }
    if (failed.length > 0) this.record({ type: 'RecordBridge', data: { callId: this.callId, sipUri: null, failed, ...this.trunk() } });
    end ??= {
      reason: 'sip_unreachable',
      detail: failed.length ? failed.map((f) => `${f.sipUri}: ${f.error}`).join('; ') : 'the trunk has no origination URIs',
    };
    void this.hangup(end.reason, end.detail);
  }

  private trunk(): { trunkId?: string } {
    return this.call.sipTrunkId ? { trunkId: this.call.sipTrunkId } : {};
  }

  // ---- turns --------------------------------------------------------------------------------------------

  private callerTurn(u: CallerSpeech): void {
    const now = this.deps.clock.now().toISOString();
    const turnId = this.deps.ids.derived('turn', this.callId, 'caller', u.utteranceId);
    const speechEnd = performance.now();
    const recordTurn = () =>
      this.record({
        type: 'RecordCallerTurn',
        data: { callId: this.callId, turnId, transcript: u.transcript, confidence: u.confidence, startedAt: now, endedAt: now },
      });
    const history = [...this.history];
    this.history.push({ id: turnId, role: 'user', content: u.transcript, at: now });
    // the reply is asked for first and the turn written after: on an embedded database a write holds this thread
    if (!this.answers()) {
      recordTurn();
      return;
    }
    if (this.phase === 'screened') this.phase = isScreenerHold(u.transcript) ? 'screened' : 'talking';
    if (this.phase === 'screened') {
      recordTurn();
      return;
    }
    if (this.phase === 'screening') {
      this.phase = 'screened';
      recordTurn();
      const s = this.call.settings;
      const identity = s.screeningIdentity ?? this.call.agentName;
      this.speakAlone('screening', `This is ${identity}, calling about ${s.screeningPurpose}.`, [], turnId);
      return;
    }
    // a reply still being prepared for an earlier turn is superseded by this one
    for (const t of this.turns.values()) {
      if (t.generating && t.pending.size === 0 && t.pieces.length === 0) {
        t.silentReason = 'superseded: the caller spoke again before the reply began';
        t.abort.abort();
        t.generating = false;
        this.settle(t);
      }
    }
    const first = this.callerTurns++ === 0;
    const turn = this.openTurn(this.call.settings.mode === 'hosted' ? 'model' : 'webhook', turnId);
    turn.marks.speechEnd = speechEnd;
    turn.marks.recognitionMs = u.recognitionMs ?? null;
    void this.runReply(turn, {
      callerTurnId: turnId,
      transcript: u.transcript,
      confidence: u.confidence,
      history,
      answeredBy: this.answeredBy,
      first,
    });
    // after the request's bytes are on the socket (node writes them on the next tick); the end of the call
    // writes it first if it comes sooner, so the stream keeps the order things happened in
    this.deferred.add(recordTurn);
    setImmediate(() => this.flushDeferred());
  }

  /** Whether what the far end says now gets a reply: not a voicemail greeting, nor anything while the agent hangs up. */
  private answers(): boolean {
    const closing = this.phase === 'awaiting-beep' || this.phase === 'leaving-message' || this.phase === 'closing';
    return !closing && this.endReason === null;
  }

  private async runReply(turn: AgentTurn, input: Parameters<ReplySource['reply']>[0]): Promise<void> {
    try {
      for await (const ev of this.deps.replies.reply(input, turn.abort.signal)) {
        if (turn.abort.signal.aborted || this.finished) break;
        if (ev.kind === 'request-sent') turn.marks.request = performance.now();
        else if (ev.kind === 'first-byte') turn.marks.firstByte = performance.now();
        else if (ev.kind === 'speech') this.play(turn, ev.text);
        else if (ev.kind === 'digits') turn.wanted.push({ type: 'digits', value: ev.digits });
        else turn.wanted.push({ type: ev.action, value: null });
      }
    } catch (err) {
      if (!turn.abort.signal.aborted) {
        turn.silentReason = err instanceof SilentTurn ? err.reason : `error: ${(err as Error).message}`;
        if (!(err instanceof SilentTurn)) this.deps.log.error({ err, callId: this.callId }, 'voice reply failed');
      }
    }
    turn.generating = false;
    this.settle(turn);
  }

  private openTurn(source: AgentTurnSource, replyTo: string | null): AgentTurn {
    const turn: AgentTurn = {
      turnId: this.deps.ids.id('turn'),
      source,
      replyTo,
      pieces: [],
      pending: new Set(),
      heard: new Map(),
      generating: true,
      interrupted: false,
      silentReason: null,
      actions: [],
      wanted: [],
      abort: new AbortController(),
      marks: { speechEnd: null, request: null, firstByte: null, speechStart: null, recognitionMs: null, synthesisMs: null },
      startedAt: this.deps.clock.now().toISOString(),
      done: false,
    };
    this.turns.set(turn.turnId, turn);
    return turn;
  }

  /** A turn the platform says by itself (greeting, screening answer, voicemail message). */
  private speakAlone(source: AgentTurnSource, text: string, wanted: AgentTurn['wanted'] = [], replyTo: string | null = null): void {
    const turn = this.openTurn(source, replyTo);
    turn.wanted.push(...wanted);
    this.play(turn, text);
    turn.generating = false;
    this.settle(turn);
  }

  private play(turn: AgentTurn, text: string): void {
    if (!this.leg || !text.trim()) return;
    if (turn.marks.speechStart === null) turn.marks.speechStart = performance.now();
    const id = `${turn.turnId}.${turn.pieces.length}`;
    turn.pieces.push({ id, text });
    turn.pending.add(id);
    this.owner.set(id, turn);
    this.leg.play(id, text, { voice: this.call.settings.voice });
  }

  private agentSpeaking(): boolean {
    for (const t of this.turns.values()) if (t.pending.size > 0) return true;
    return false;
  }

  private scheduleBargeIn(): void {
    const delay = bargeInDelayMs(this.call.settings.interruptionSensitivity);
    if (delay === null || this.bargeTimer) return;
    if (delay === 0) {
      this.cut();
      return;
    }
    this.bargeTimer = setTimeout(() => {
      this.bargeTimer = null;
      // still talking over the agent, and not a backchannel
      if ([...this.overlapping.values()].some((o) => !o.backchannel) && this.agentSpeaking()) this.cut();
    }, delay);
  }

  /** Stops the agent's speech: every open turn that was playing is interrupted and keeps what was heard. */
  private cut(): void {
    if (this.bargeTimer) clearTimeout(this.bargeTimer);
    this.bargeTimer = null;
    if (!this.leg) return;
    let stopped: ReturnType<CallLeg['stopPlayback']>;
    try {
      stopped = this.leg.stopPlayback();
    } catch {
      stopped = { cut: [...this.owner.keys()], heard: {} };
    }
    for (const id of stopped.cut) {
      const turn = this.owner.get(id);
      if (!turn) continue;
      this.owner.delete(id);
      turn.pending.delete(id);
      turn.heard.set(id, stopped.heard[id] ?? '');
      turn.interrupted = true;
      turn.abort.abort();
      turn.generating = false;
    }
    for (const t of this.turns.values()) this.settle(t);
  }

  /** Records a turn once nothing more can be said in it, then carries out what its reply asked for. */
  private settle(turn: AgentTurn): void {
    if (turn.done || turn.generating || turn.pending.size > 0) return;
    turn.done = true;
    this.turns.delete(turn.turnId);
    const text = turn.pieces.map((p) => p.text).join(' ');
    const spoken = turn.pieces
      .map((p) => (turn.heard.has(p.id) ? turn.heard.get(p.id)! : p.text))
      .filter((s) => s.trim() !== '')
      .join(' ');
    const m = turn.marks;
    const round = (v: number | null) => (v === null ? null : Math.max(0, Math.round(v * 1000) / 1000));
    const ms = (a: number | null, b: number | null) => (a === null || b === null ? null : round(b - a));
    const latency: TurnLatency | null =
      m.request === null
        ? null
        : {
            recognitionMs: round(m.recognitionMs),
            requestMs: ms(m.speechEnd, m.request),
            firstByteMs: ms(m.request, m.firstByte),
            speechStartMs: ms(m.firstByte, m.speechStart),
            synthesisMs: round(m.synthesisMs),
          };
    if (text === '' && turn.silentReason === null && turn.wanted.length === 0 && !turn.interrupted)
      turn.silentReason = turn.source === 'webhook' ? 'the webhook answered no text' : 'nothing to say';
    const actions = this.carryOut(turn);
    const now = this.deps.clock.now().toISOString();
    if (spoken) this.history.push({ id: turn.turnId, role: 'agent', content: spoken, at: now });
    this.record({
      type: 'RecordAgentTurn',
      data: {
        callId: this.callId,
        turnId: turn.turnId,
        source: turn.source,
        text,
        spoken,
        interrupted: turn.interrupted,
        replyTo: turn.replyTo,
        silentReason: turn.silentReason,
        latency,
        actions,
        startedAt: turn.startedAt,
        endedAt: now,
      },
    });
  }

  /** Digits, transfer and hang-up asked for by a turn, after its speech; an interrupted turn's are dropped. */
  private carryOut(turn: AgentTurn): TurnAction[] {
    const out: TurnAction[] = [];
    for (const w of turn.wanted) {
      if (turn.interrupted || this.finished) {
        out.push({
          ...w,
          outcome: 'refused',
          detail: turn.interrupted ? 'the turn was interrupted before its speech ended' : 'the call had ended',
        });
        continue;
      }
      if (w.type === 'digits') {
        out.push({ ...w, outcome: 'done', detail: null });
        this.leg?.sendDigits(w.value!).then(
          () => this.record({ type: 'RecordDigitsSent', data: { callId: this.callId, digits: w.value! } }),
          (err: Error) => this.deps.log.warn({ callId: this.callId, err: err.message }, 'sending digits failed'),
        );
      } else if (w.type === 'end_call') {
        out.push({ ...w, outcome: 'done', detail: null });
        void this.hangup(turn.source === 'voicemail' ? 'voicemail_reached' : 'agent_hangup');
      } else {
        const refusal = this.transferRefusal();
        if (refusal) {
          out.push({ type: 'transfer', value: this.call.settings.transferNumber, outcome: 'refused', detail: refusal });
          continue;
        }
        const to = this.call.settings.transferNumber!;
        out.push({ type: 'transfer', value: to, outcome: 'done', detail: null });
        this.endReason = 'call_transfer';
        this.endDetail = `transferred to ${to}`;
        this.record({ type: 'RecordTransfer', data: { callId: this.callId, to } });
        const callerId = this.call.settings.trunkTransferCallerId ?? 'transferee';
        this.leg?.transfer(to, { callerId }).catch((err: Error) => {
          this.endReason = null;
          this.endDetail = null;
          this.deps.log.warn({ callId: this.callId, err: err.message }, 'transfer failed');
        });
      }
    }
    return out;
  }

  private transferRefusal(): string | null {
    const s = this.call.settings;
    if (this.call.direction === 'web') return 'a web call cannot be transferred: the caller is in a browser, not on a phone line';
    if (!s.transferNumber) return 'the agent has no transferNumber';
    if (s.trunkTransfers === 'none') return "the number's SIP trunk does not allow transfers";
    if (s.trunkTransfers === 'sip' && !s.transferNumber.startsWith('sip:'))
      return "the number's SIP trunk allows transfers to SIP addresses only";
    return null;
  }

  // ---- bookkeeping --------------------------------------------------------------------------------------

  /** Any sign of life on the line resets the silence timer. */
  private touch(): void {
    // a bridged call is between the caller and the SIP destination: the platform hears nothing to time
    if (this.finished || this.call.settings.mode === 'sip') return;
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => {
      if (!this.agentSpeaking()) void this.hangup('inactivity', `no speech for ${this.call.settings.maxSilenceMs} ms`);
      else this.touch();
    }, this.call.settings.maxSilenceMs);
  }

  /** Caller turns whose write waits for their reply's request to go out. */
  private readonly deferred = new Set<() => void>();

  private flushDeferred(): void {
    const writes = [...this.deferred];
    this.deferred.clear();
    for (const write of writes) write();
  }

  private finish(reason: DisconnectionReason, detail: string | null): void {
    if (this.finished) return;
    this.flushDeferred();
    this.finished = true;
    for (const t of [this.bargeTimer, this.silenceTimer, this.maxTimer]) if (t) clearTimeout(t);
    // the line's report (SIP Call-ID, media) goes on the record before its end (docs/sip.md#observability)
    const report = this.leg?.report?.() ?? null;
    if (report) this.record({ type: 'RecordLegReport', data: { callId: this.callId, ...report } });
    this.keepBridgedAudio();
    this.record({ type: 'EndCall', data: { callId: this.callId, reason, detail } });
    void this.writes.then(() => {
      this.deps.onEnded(this.callId);
      this.resolveEnded();
    });
  }

  /**
   * A recorded bridged call (docs/sip.md#recording-bridged-calls): the audio the engine relayed is stored as the call's
   * recording before its end is recorded, so the recording step (CallRecordingProcess) finds it and renders nothing.
   * A store that fails is logged: the step then renders the call's turns (a bridged call has none: no recording).
   */
  private keepBridgedAudio(): void {
    const store = this.deps.recordings;
    if (this.call.settings.mode !== 'sip' || !this.call.settings.recording || !store) return;
    const audio = this.leg?.bridgedAudio?.() ?? null;
    if (!audio) return;
    const stored = { callId: this.callId, accountId: this.call.accountId, ...audio, createdAt: this.deps.clock.now().toISOString() };
    // stored before the facts that follow: they wait for it in a write of their own
    this.waiting = null;
    this.writes = this.writes.then(() =>
      store.put(stored).catch((err: unknown) => this.deps.log.error({ err, callId: this.callId }, "keeping a bridged call's audio failed")),
    );
  }

  /**
   * Queues a fact for the call's stream (docs/calls.md#the-live-session). Facts that come at the same moment (a
   * hung-up line's report and end), or while the write before them is on its way, wait for it and then go together,
   * decided in their order and written in one append (`executeInOrder`). A fact refused
   * because the call has ended hangs the line up. A write that fails for a transient reason (the database away) is
   * tried again, with a growing pause, until it lands: the facts behind it wait in the queue, so the stream keeps the
   * order the call saw them in.
   */
  private record(command: CommandInput<CallCommand>): void {
    // a caller turn still waiting for its reply's request goes first: every later fact follows it
    if (command.type !== 'RecordCallerTurn') this.flushDeferred();
    if (this.waiting) {
      this.waiting.push(command);
      return;
    }
    const facts = [command];
    this.waiting = facts;
    this.writes = this.writes.then(() => {
      // on its way: facts from now on wait for this write
      if (this.waiting === facts) this.waiting = null;
      return this.write(facts);
    });
  }

  /** The facts queued behind the write on its way, not yet begun (null: none). */
  private waiting: CommandInput<CallCommand>[] | null = null;

  private async write(facts: readonly CommandInput<CallCommand>[]): Promise<void> {
    const commands = facts.map((c) => c.type);
    const giveUpAt = Date.now() + (this.deps.retryForMs ?? 15 * 60_000);
    for (let attempt = 1; ; attempt++) {
      try {
        const { refusals } = await this.deps.exec.executeInOrder(callDecider, callStream(this.callId), facts, this.ctx);
        if (attempt > 1) this.deps.log.info({ callId: this.callId, commands, attempt }, 'call facts recorded after retries');
        for (const [i, err] of refusals.entries()) if (err !== undefined) this.refused(facts[i]!, err);
        return;
      } catch (err) {
        const transient = this.deps.isTransient?.(err) ?? !(err instanceof DomainError);
        if (!transient || Date.now() >= giveUpAt) {
          this.deps.log.error({ err, callId: this.callId, commands, attempt }, 'recording call facts failed; given up');
          return;
        }
        if (attempt === 1) this.deps.log.warn({ err, callId: this.callId, commands }, 'recording call facts failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** Math.min(attempt - 1, 10), 5000)));
      }
    }
  }

  /** A fact the call's decider refused: one refused because the call has ended hangs the line up; any other is logged. */
  private refused(command: CommandInput<CallCommand>, err: unknown): void {
    if (err instanceof DomainError && err.code === 'CALL_NOT_LIVE') {
      if (!this.finished) {
        this.endReason = this.endReason ?? 'ended_by_api';
        void this.leg?.hangup();
      }
      return;
    }
    this.deps.log.error({ err, callId: this.callId, command: command.type }, 'recording a call fact refused; given up');
  }
}

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  type AnsweredBy,
  type CallLeg,
  type DialFailure,
  type DialRequest,
  type InboundDecision,
  type InboundOffer,
  type LegEndReason,
  type LegListener,
  type PlaybackOptions,
  type StoppedPlayback,
  TelephonyError,
  type VoiceEnginePort,
} from '../../../application/calls/voice-engine.port.js';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { LoggerPort } from '../../../application/ports/logger.port.js';
import {
  BACKCHANNELS,
  FEW_WORDS,
  INTERRUPTION,
  inboundPersonaFor,
  MENU_GOODBYE,
  MENU_OPTIONS,
  MENU_PROMPT,
  menuConnecting,
  PERSONA_NUMBERS,
  personaFor,
  SCREENER_HOLD,
  SCREENER_HUMAN,
  SCREENER_PROMPT,
  TALKER_GREETING,
  TALKER_SCRIPT,
  VOICEMAIL_GREETING,
  type VoicePersona,
} from './magic.js';

/** How fast the simulated phone network and far ends are (SANDBOX_VOICE_*, docs/sandbox.md#speech-takes-time). */
export type SandboxVoiceTiming = Readonly<{
  /** the default speaking rate of agent playbacks, and the far end's rate */
  wordsPerMinute: number;
  /** how long an outbound call rings before its far end answers */
  ringMs: number;
  /** the far end's pause before it answers the agent */
  replyPauseMs: number;
}>;

/** How many ended legs stay inspectable by default (the newest). */
export const KEEP_ENDED_LEGS = 500;
/** The voicemail's message limit, in words at the far end's rate (two minutes at 165 words a minute). */
export const VOICEMAIL_MAX_WORDS = 330;

export type PlaybackState = 'queued' | 'playing' | 'finished' | 'cut' | 'dropped';

/** One agent playback as the far end heard it. */
export type SandboxPlaybackView = Readonly<{
  playbackId: string;
  text: string;
  voice: string;
  wordsPerMinute: number;
  /** the words heard: all of them when finished, those spoken before the cut when cut, '' when dropped or queued */
  heard: string;
  state: PlaybackState;
  queuedAt: string;
  startedAt: string | null;
  endedAt: string | null;
}>;

/** One thing the far end said. */
export type SandboxUtteranceView = Readonly<{
  utteranceId: string;
  text: string;
  /** what was said: `text`, or its first words when the utterance was cut (the call ended, a key cut a menu prompt) */
  transcript: string;
  /** whether the agent was speaking when it began (the far end talked over the agent) */
  overAgent: boolean;
  /** from the sandbox API (`say`), not from the persona */
  fromSandboxApi: boolean;
  startedAt: string;
  endedAt: string | null;
}>;

export type SandboxBridgeAttempt = Readonly<{ sipUri: string; outcome: string; at: string }>;

export type SandboxLegStatus = 'dialing' | 'ringing' | 'answered' | 'failed' | 'ended';

/** A leg as the far end sees it (docs/sandbox.md#voice). */
export type SandboxCallView = Readonly<{
  callId: string;
  engineCallId: string;
  direction: 'outbound' | 'inbound';
  from: string;
  to: string;
  /** who is at the far end: a persona by its number, or `driven` (an inbound caller that speaks only through the sandbox API) */
  persona: VoicePersona | 'driven';
  /** what the far end is doing now, e.g. `talker: 2 of 4 lines said`, `voicemail: recording` */
  stage: string;
  status: SandboxLegStatus;
  answeredBy: AnsweredBy | null;
  failure: Readonly<{ reason: DialFailure; detail: string }> | null;
  endReason: LegEndReason | null;
  endDetail: string | null;
  createdAt: string;
  ringingAt: string | null;
  answeredAt: string | null;
  endedAt: string | null;
  /** every agent playback, in order */
  agentSpeech: readonly SandboxPlaybackView[];
  /** everything the far end said, in order */
  farEndSpeech: readonly SandboxUtteranceView[];
  /** keypad tones the agent sent */
  digitsFromAgent: string;
  /** keypad tones the far end pressed */
  digitsFromFarEnd: string;
  beepAt: string | null;
  /** voicemail: what it recorded after the beep */
  voicemailMessage: string | null;
  /** screener: what it heard the agent say before the person picked up */
  screenerHeard: string | null;
  transferredTo: string | null;
  /** the SIP URI that answered a bridge */
  bridgedTo: string | null;
  bridgeAttempts: readonly SandboxBridgeAttempt[];
}>;

/** A sandbox control named a call the engine does not know (or no longer keeps). */
export class SandboxCallNotFoundError extends Error {
  constructor(readonly callId: string) {
    super(`No sandbox call ${callId} (calls are kept in this process's memory while live, and the last ${KEEP_ENDED_LEGS} after they end)`);
    this.name = 'SandboxCallNotFoundError';
  }
}

/** A sandbox control on a call that is not connected: still ringing, failed or ended. */
export class SandboxCallNotConnectedError extends Error {
  constructor(
    readonly callId: string,
    readonly status: SandboxLegStatus,
  ) {
    super(`The sandbox call ${callId} is not connected (it is ${status})`);
    this.name = 'SandboxCallNotConnectedError';
  }
}

/** The platform refused an inbound call, or nothing in this process takes inbound calls; `reason` says which. */
export class InboundCallRefusedError extends Error {
  constructor(readonly reason: string) {
    super(`The platform refused the call: ${reason}`);
    this.name = 'InboundCallRefusedError';
  }
}

/** A SIP URI did not answer a bridge: the final SIP response the simulated origination got. */
export class SipBridgeError extends Error {
  constructor(
    readonly sipUri: string,
    readonly sipStatus: number,
    readonly sipReason: string,
  ) {
    super(`SIP ${sipStatus} ${sipReason} from ${sipUri}`);
    this.name = 'SipBridgeError';
  }
}

const E164 = /^\+[1-9]\d{1,14}$/;
const DIGITS = /^[0-9*#]+$/;
const NOTHING_STOPPED: StoppedPlayback = { cut: [], heard: {} };

const wordsOf = (text: string): string[] => text.trim().split(/\s+/).filter(Boolean);
const msPerWordAt = (wordsPerMinute: number) => 60_000 / wordsPerMinute;
/** A recogniser is less sure of very short utterances. */
const confidenceOf = (words: number) => (words <= 2 ? 0.7 : 0.92);

/** Every timer of one owner, so that all of them can be dropped at once. */
class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();

  after(ms: number, f: () => void): NodeJS.Timeout {
    const t = setTimeout(
      () => {
        this.pending.delete(t);
        f();
      },
      Math.max(0, ms),
    );
    this.pending.add(t);
    return t;
  }

  cancel(t: NodeJS.Timeout | null): void {
    if (!t) return;
    clearTimeout(t);
    this.pending.delete(t);
  }

  clear(): void {
    for (const t of this.pending) clearTimeout(t);
    this.pending.clear();
  }
}

/**
 * One leg's listener calls, in order and one at a time (the port's rule): each call is queued and delivered
 * after the engine method that caused it has returned, as a provider's callbacks would be; a call made while
 * the listener runs waits for it to return. Nothing is delivered after `ended` or `failed`.
 */
class LegEvents {
  private readonly queue: ((l: LegListener) => void)[] = [];
  private draining: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly listener: LegListener,
    private readonly onError: (err: unknown) => void,
  ) {}

  send(call: (l: LegListener) => void): void {
    if (this.closed) return;
    this.queue.push(call);
    this.draining ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        for (let next = this.queue.shift(); next; next = this.queue.shift()) {
          try {
            next(this.listener);
          } catch (err) {
            this.onError(err);
          }
        }
        this.draining = null;
        resolve();
      }),
    );
  }

  /** Sends the last call: nothing follows it. */
  last(call: (l: LegListener) => void): void {
    this.send(call);
    this.closed = true;
  }

  /** Resolves once every call queued so far has been delivered. */
  idle(): Promise<void> {
    return this.draining ?? Promise.resolve();
  }
}

type Playback = {
  readonly id: string;
  readonly text: string;
  readonly words: readonly string[];
  readonly voice: string;
  readonly wordsPerMinute: number;
  readonly msPerWord: number;
  readonly queuedAt: string;
  state: PlaybackState;
  heard: string;
  startedAt: string | null;
  endedAt: string | null;
  startMono: number | null;
  /** the timer that ends it naturally */
  timer: NodeJS.Timeout | null;
  /** the interrupter's or backchanneler's cue inside it */
  cue: NodeJS.Timeout | null;
  /** voicemail: the first word recorded (the words before the beep are not) */
  recordFrom: number | null;
  /** screener: spoken while the screener listened */
  screened: boolean;
};

type Phase =
  | { kind: 'driven' }
  | { kind: 'silent' }
  | { kind: 'hang-up'; hangingUp: boolean }
  | { kind: 'talker'; style: 'plain' | 'interrupter' | 'backchanneler'; line: number; backchannels: number }
  | { kind: 'voicemail'; stage: 'greeting' | 'recording'; spoke: boolean; silence: NodeJS.Timeout | null }
  | { kind: 'screener'; stage: 'prompt' | 'listening' | 'holding' }
  | { kind: 'menu'; stage: 'choosing' | 'connecting' | 'goodbye'; prompts: number; noInput: NodeJS.Timeout | null };

type Utterance = {
  readonly text: string;
  readonly words: readonly string[];
  readonly fromSandboxApi: boolean;
  /** the phase that said it: its continuation runs only while that phase lasts */
  readonly phase: Phase;
  /** what follows when it was said to the end */
  readonly afterwards: (() => void) | null;
  id: string;
  transcript: string;
  overAgent: boolean;
  startedAt: string;
  endedAt: string | null;
  startMono: number;
  timer: NodeJS.Timeout | null;
};

type LegContext = Readonly<{
  timing: SandboxVoiceTiming;
  clock: ClockPort;
  log: LoggerPort;
  retire: (leg: SandboxLeg) => void;
}>;

type LegInit = Readonly<{
  engineCallId: string;
  callId: string;
  direction: 'outbound' | 'inbound';
  from: string;
  to: string;
  persona: VoicePersona | 'driven';
}>;

const phaseOf = (persona: VoicePersona | 'driven'): Phase => {
  switch (persona) {
    case 'talker':
    case 'interrupter':
    case 'backchanneler':
      return { kind: 'talker', style: persona === 'talker' ? 'plain' : persona, line: 0, backchannels: 0 };
    case 'voicemail':
      return { kind: 'voicemail', stage: 'greeting', spoke: false, silence: null };
    case 'screener':
      return { kind: 'screener', stage: 'prompt' };
    case 'menu':
      return { kind: 'menu', stage: 'choosing', prompts: 0, noInput: null };
    case 'silent':
      return { kind: 'silent' };
    case 'hang-up':
      return { kind: 'hang-up', hangingUp: false };
    case 'driven':
    case 'busy':
    case 'no-answer':
    case 'provider-error':
    case 'invalid-number':
      return { kind: 'driven' };
  }
};

/**
 * One simulated leg: the platform's side is the `CallLeg` port; the far end is a persona (magic.ts)
 * or the sandbox API. Speech takes words × 60000 / words-per-minute milliseconds; what was heard of a playback is
 * measured on the monotonic clock, so a cut reports exactly the words spoken before it.
 */
class SandboxLeg implements CallLeg {
  readonly engineCallId: string;
  readonly callId: string;
  readonly direction: 'outbound' | 'inbound';
  readonly from: string;
  readonly to: string;
  readonly persona: VoicePersona | 'driven';
  status: SandboxLegStatus = 'dialing';

  private readonly events: LegEvents;
  private readonly mechanics = new Timers();
  private readonly cues = new Timers();
  private readonly waiting = new Set<(err: Error) => void>();
  private phase: Phase;
  private over = false;

  private readonly playbacks: Playback[] = [];
  private queue: Playback[] = [];
  private current: Playback | null = null;
  private stoppedAtEnd: StoppedPlayback = NOTHING_STOPPED;

  private readonly utterances: Utterance[] = [];
  private farQueue: Utterance[] = [];
  private speaking: Utterance | null = null;
  private reply: NodeJS.Timeout | null = null;

  private answeredBy: AnsweredBy | null = null;
  private failure: { reason: DialFailure; detail: string } | null = null;
  private endReason: LegEndReason | null = null;
  private endDetail: string | null = null;
  private readonly createdAt: string;
  private ringingAt: string | null = null;
  private answeredAt: string | null = null;
  private endedAt: string | null = null;
  private beepAt: string | null = null;
  private digitsFromAgent = '';
  private digitsFromFarEnd = '';
  private transferring = false;
  private transferredTo: string | null = null;
  private bridgedTo: string | null = null;
  private readonly bridgeAttempts: SandboxBridgeAttempt[] = [];

  constructor(
    init: LegInit,
    listener: LegListener,
    private readonly ctx: LegContext,
  ) {
    this.engineCallId = init.engineCallId;
    this.callId = init.callId;
    this.direction = init.direction;
    this.from = init.from;
    this.to = init.to;
    this.persona = init.persona;
    this.phase = phaseOf(init.persona);
    this.createdAt = this.now();
    this.events = new LegEvents(listener, (err) =>
      ctx.log.error({ err, callId: this.callId, engineCallId: this.engineCallId }, 'sandbox voice: a leg listener threw'),
    );
  }

  // ---- the port ------------------------------------------------------------------------------------------

  play(playbackId: string, text: string, o: PlaybackOptions): void {
    if (this.over) return; // the leg is gone and `ended` is on its way: nobody hears it
    const wordsPerMinute = o.wordsPerMinute !== undefined && o.wordsPerMinute > 0 ? o.wordsPerMinute : this.ctx.timing.wordsPerMinute;
    const p: Playback = {
      id: playbackId,
      text,
      words: wordsOf(text),
      voice: o.voice,
      wordsPerMinute,
      msPerWord: msPerWordAt(wordsPerMinute),
      queuedAt: this.now(),
      state: 'queued',
      heard: '',
      startedAt: null,
      endedAt: null,
      startMono: null,
      timer: null,
      cue: null,
      recordFrom: null,
      screened: false,
    };
    this.playbacks.push(p);
    this.queue.push(p);
    // speech queued before the answer starts when the far end picks up
    if (!this.current && this.status === 'answered') this.startNextPlayback();
  }

  stopPlayback(): StoppedPlayback {
    if (this.over) {
      // what was heard when the leg ended, reported once
      const atEnd = this.stoppedAtEnd;
      this.stoppedAtEnd = NOTHING_STOPPED;
      return atEnd;
    }
    if (!this.current && this.queue.length === 0) return NOTHING_STOPPED;
    const started = this.current;
    const { finished, stopped } = this.settlePlaybacks(performance.now());
    if (finished) this.events.send((l) => l.playbackFinished(finished.id));
    for (const id of stopped.cut) this.events.send((l) => l.playbackFinished(id));
    if (started) this.onPlaybackEnded(started);
    this.onAgentTurnEnded();
    return stopped;
  }

  isPlaying(): boolean {
    return this.current !== null || this.queue.length > 0;
  }

  async sendDigits(digits: string): Promise<void> {
    if (!DIGITS.test(digits)) throw new TelephonyError(`Keypad tones are 0-9, * and #; got ${JSON.stringify(digits)}`, false);
    this.requireConnected();
    for (const digit of digits) {
      await this.wait(this.toneMs());
      this.digitsFromAgent += digit;
      this.onAgentDigit(digit);
    }
  }

  async transfer(to: string): Promise<void> {
    this.requireConnected();
    if (!E164.test(to) && !/^sips?:\S+$/i.test(to))
      throw new TelephonyError(`Cannot transfer to ${JSON.stringify(to)}: not an E.164 number or a SIP URI`, false);
    if (PERSONA_NUMBERS[to]?.persona === 'provider-error')
      throw new TelephonyError(`Telephony provider error: the transfer to ${to} was refused`, true);
    if (this.transferring) throw new TelephonyError('A transfer of this call is already under way', false);
    this.transferring = true;
    this.becomeDriven(); // the far end is being connected elsewhere: it no longer reacts to the agent
    await this.wait(this.ctx.timing.replyPauseMs);
    this.transferredTo = to;
    this.end('transferred', `transferred to ${to}`);
  }

  async bridge(sipUri: string): Promise<void> {
    this.requireConnected();
    if (this.bridgedTo) throw new TelephonyError(`The call is already bridged to ${this.bridgedTo}`, false);
    const host = /^sips?:(?:[^@\s]*@)?([^;:>?\s]+)/i.exec(sipUri)?.[1]?.toLowerCase();
    const refuse = (status: number, reason: string) => {
      this.bridgeAttempts.push({ sipUri, outcome: `SIP ${status} ${reason}`, at: this.now() });
      return new SipBridgeError(sipUri, status, reason);
    };
    if (!host) throw refuse(416, 'Unsupported URI Scheme');
    if (host.startsWith('fail')) {
      await this.wait(this.ctx.timing.replyPauseMs);
      throw refuse(503, 'Service Unavailable');
    }
    // an endpoint that never answers: the INVITE times out after it would have rung
    await this.wait(this.ctx.timing.ringMs);
    if (host.includes('unreachable')) throw refuse(408, 'Request Timeout');
    this.bridgedTo = sipUri;
    this.bridgeAttempts.push({ sipUri, outcome: 'answered', at: this.now() });
    this.becomeDriven(); // the caller talks to the SIP endpoint now
  }

  async hangup(): Promise<void> {
    if (!this.over) this.end('local_hangup', null);
    await this.events.idle();
  }

  // ---- the network and the engine ------------------------------------------------------------------------

  /** Timers that belong to the network (ringing, answer, failure); dropped when the leg ends. */
  schedule(ms: number, f: () => void): void {
    this.mechanics.after(ms, () => {
      if (!this.over) f();
    });
  }

  ring(): void {
    if (this.over || this.status !== 'dialing') return;
    this.status = 'ringing';
    this.ringingAt = this.now();
    this.events.send((l) => l.ringing());
  }

  answer(by: AnsweredBy): void {
    if (this.over || this.status === 'answered') return;
    this.status = 'answered';
    this.answeredBy = by;
    this.answeredAt = this.now();
    this.events.send((l) => l.answered(by));
    if (this.queue.length > 0) this.startNextPlayback();
    // the far end's pause runs from when the platform heard of the answer, as a person's runs from hearing the
    // line open: a platform that is slow to learn of it does not find the callee already talking
    void this.events.idle().then(() => {
      if (!this.over) this.onAnswered();
    });
  }

  fail(reason: DialFailure, detail: string): void {
    if (this.over) return;
    this.settlePlaybacks(performance.now()); // speech queued before an answer that never came is dropped
    this.over = true;
    this.status = 'failed';
    this.failure = { reason, detail };
    this.endedAt = this.now();
    this.mechanics.clear();
    this.cues.clear();
    this.events.last((l) => l.failed(reason, detail));
    this.rejectWaiting(new TelephonyError(`The call failed: ${detail}`, false));
    this.ctx.retire(this);
  }

  /** Ends the leg: what was playing is cut where it was, a far-end utterance under way is finalised, then `ended`. */
  end(reason: LegEndReason, detail: string | null): void {
    if (this.over) return;
    const mono = performance.now();
    const { finished, stopped } = this.settlePlaybacks(mono);
    if (finished) this.events.send((l) => l.playbackFinished(finished.id));
    this.stoppedAtEnd = stopped;
    if (this.speaking) this.finishUtterance(this.speaking, mono, true);
    this.farQueue = [];
    this.over = true;
    this.status = 'ended';
    this.endReason = reason;
    this.endDetail = detail;
    this.endedAt = this.now();
    this.mechanics.clear();
    this.cues.clear();
    this.events.last((l) => l.ended(reason, detail));
    this.rejectWaiting(new TelephonyError('The call has ended', false));
    this.ctx.retire(this);
  }

  get live(): boolean {
    return !this.over;
  }

  idle(): Promise<void> {
    return this.events.idle();
  }

  // ---- the sandbox API: the far end driven by hand -------------------------------------------------------

  /** The far end says `text` now (after what it is saying already); over the agent's speech it is an interruption. */
  farEndSay(text: string): void {
    this.speak(text, { fromSandboxApi: true });
  }

  /** The far end presses keys: one `digitReceived` per key, a tone's length apart. */
  farEndPress(digits: string): void {
    const keys = [...digits];
    const next = () => {
      const digit = keys.shift();
      if (digit === undefined) return;
      this.schedule(this.toneMs(), () => {
        this.digitsFromFarEnd += digit;
        this.events.send((l) => l.digitReceived(digit));
        next();
      });
    };
    next();
  }

  /** The far end hangs up; while an outbound call still rings, the callee declines it (busy). */
  farEndHangup(detail: string): void {
    if (this.status === 'answered') this.end('remote_hangup', detail);
    else if (this.direction === 'outbound') this.fail('busy', 'The callee declined the call.');
  }

  view(): SandboxCallView {
    const recorded = this.playbacks.filter((p) => p.recordFrom !== null);
    const screened = this.playbacks.filter((p) => p.screened && p.heard !== '');
    return {
      callId: this.callId,
      engineCallId: this.engineCallId,
      direction: this.direction,
      from: this.from,
      to: this.to,
      persona: this.persona,
      stage: this.stage(),
      status: this.status,
      answeredBy: this.answeredBy,
      failure: this.failure,
      endReason: this.endReason,
      endDetail: this.endDetail,
      createdAt: this.createdAt,
      ringingAt: this.ringingAt,
      answeredAt: this.answeredAt,
      endedAt: this.endedAt,
      agentSpeech: this.playbacks.map((p) => ({
        playbackId: p.id,
        text: p.text,
        voice: p.voice,
        wordsPerMinute: p.wordsPerMinute,
        heard: p.state === 'playing' ? p.words.slice(0, this.heardWords(p, performance.now())).join(' ') : p.heard,
        state: p.state,
        queuedAt: p.queuedAt,
        startedAt: p.startedAt,
        endedAt: p.endedAt,
      })),
      farEndSpeech: this.utterances.map((u) => ({
        utteranceId: u.id,
        text: u.text,
        transcript: u.endedAt === null ? u.words.slice(0, this.spokenWords(u, performance.now())).join(' ') : u.transcript,
        overAgent: u.overAgent,
        fromSandboxApi: u.fromSandboxApi,
        startedAt: u.startedAt,
        endedAt: u.endedAt,
      })),
      digitsFromAgent: this.digitsFromAgent,
      digitsFromFarEnd: this.digitsFromFarEnd,
      beepAt: this.beepAt,
      voicemailMessage:
        this.beepAt === null
          ? null
          : recorded
              .flatMap((p) =>
                wordsOf(p.state === 'playing' ? p.words.slice(0, this.heardWords(p, performance.now())).join(' ') : p.heard).slice(
                  p.recordFrom ?? 0,
                ),
              )
              .join(' '),
      screenerHeard: this.persona === 'screener' ? screened.map((p) => p.heard).join(' ') : null,
      transferredTo: this.transferredTo,
      bridgedTo: this.bridgedTo,
      bridgeAttempts: [...this.bridgeAttempts],
    };
  }

  // ---- agent speech --------------------------------------------------------------------------------------

  private startNextPlayback(): void {
    const p = this.queue.shift();
    if (!p) return;
    this.current = p;
    p.state = 'playing';
    p.startedAt = this.now();
    p.startMono = performance.now();
    p.timer = this.mechanics.after(p.words.length * p.msPerWord, () => this.finishPlayback(p));
    this.onPlaybackStarted(p);
  }

  private finishPlayback(p: Playback): void {
    if (this.over || this.current !== p) return;
    p.timer = null;
    this.cues.cancel(p.cue);
    p.cue = null;
    p.state = 'finished';
    p.heard = p.words.join(' ');
    p.endedAt = this.now();
    this.current = null;
    this.events.send((l) => l.playbackFinished(p.id));
    this.onPlaybackEnded(p);
    if (this.over) return;
    if (this.queue.length > 0) this.startNextPlayback();
    else this.onAgentTurnEnded();
  }

  /** Words of `p` fully spoken at `mono`. */
  private heardWords(p: Playback, mono: number): number {
    if (p.startMono === null) return 0;
    return Math.min(p.words.length, Math.floor((mono - p.startMono) / p.msPerWord));
  }

  /**
   * Stops the agent's speech at `mono`: the current playback is cut after the words spoken so far (or counts as
   * finished when its time is up and only its timer has not run yet), the queue is dropped.
   */
  private settlePlaybacks(mono: number): { finished: Playback | null; stopped: StoppedPlayback } {
    const cut: string[] = [];
    const heard: Record<string, string> = {};
    let finished: Playback | null = null;
    const at = this.now();
    const p = this.current;
    if (p) {
      this.mechanics.cancel(p.timer);
      this.cues.cancel(p.cue);
      p.timer = null;
      p.cue = null;
      const n = this.heardWords(p, mono);
      p.heard = p.words.slice(0, n).join(' ');
      p.endedAt = at;
      if (n >= p.words.length) {
        p.state = 'finished';
        finished = p;
      } else {
        p.state = 'cut';
        cut.push(p.id);
        heard[p.id] = p.heard;
      }
    }
    for (const q of this.queue) {
      q.state = 'dropped';
      q.endedAt = at;
      cut.push(q.id);
      heard[q.id] = '';
    }
    this.current = null;
    this.queue = [];
    return { finished, stopped: { cut, heard } };
  }

  // ---- far-end speech ------------------------------------------------------------------------------------

  private speak(text: string, o: { fromSandboxApi?: boolean; afterwards?: (() => void) | undefined } = {}): void {
    if (this.over || this.status !== 'answered') return; // nobody is on the line to speak yet
    this.farQueue.push({
      text,
      words: wordsOf(text),
      fromSandboxApi: o.fromSandboxApi ?? false,
      phase: this.phase,
      afterwards: o.afterwards ?? null,
      id: '',
      transcript: '',
      overAgent: false,
      startedAt: '',
      endedAt: null,
      startMono: 0,
      timer: null,
    });
    if (!this.speaking) this.startNextUtterance();
  }

  private startNextUtterance(): void {
    const u = this.farQueue.shift();
    if (!u) return;
    u.id = `${this.engineCallId}-u${this.utterances.length + 1}`;
    u.overAgent = this.isPlaying();
    u.startedAt = this.now();
    u.startMono = performance.now();
    this.speaking = u;
    this.utterances.push(u);
    // speech detected: the first word, with an interim result's lower confidence
    const interim = {
      utteranceId: u.id,
      transcript: u.words[0] ?? '',
      confidence: Math.round(confidenceOf(u.words.length) * 60) / 100,
      final: false,
    };
    this.events.send((l) => l.callerSpeech(interim));
    u.timer = this.mechanics.after(u.words.length * this.msPerWord(), () => this.finishUtterance(u, performance.now(), false));
  }

  private spokenWords(u: Utterance, mono: number): number {
    return Math.min(u.words.length, Math.floor((mono - u.startMono) / this.msPerWord()));
  }

  /** The utterance's final transcript: all of it, or (cut) the words spoken so far, at least the first already reported. */
  private finishUtterance(u: Utterance, mono: number, cut: boolean): void {
    if (this.speaking !== u) return;
    this.mechanics.cancel(u.timer);
    u.timer = null;
    const n = cut ? Math.max(1, this.spokenWords(u, mono)) : u.words.length;
    u.transcript = u.words.slice(0, n).join(' ');
    u.endedAt = this.now();
    this.speaking = null;
    const final = { utteranceId: u.id, transcript: u.transcript, confidence: confidenceOf(n), final: true };
    this.events.send((l) => l.callerSpeech(final));
    if (cut || this.over) return;
    if (u.afterwards && u.phase === this.phase) u.afterwards();
    if (!this.speaking && !this.over) this.startNextUtterance();
  }

  // ---- personas ------------------------------------------------------------------------------------------

  private onAnswered(): void {
    const ph = this.phase;
    switch (ph.kind) {
      case 'talker':
        this.greetUnlessSpokenTo();
        return;
      case 'voicemail':
        this.speak(VOICEMAIL_GREETING, { afterwards: () => this.voicemailBeep(ph) });
        return;
      case 'screener':
        this.speak(SCREENER_PROMPT, {
          afterwards: () => {
            ph.stage = 'listening';
            this.screenerCheck(ph);
          },
        });
        return;
      case 'menu':
        this.menuPrompt(ph);
        return;
      case 'driven':
      case 'silent':
      case 'hang-up':
        return;
    }
  }

  private onPlaybackStarted(p: Playback): void {
    const ph = this.phase;
    switch (ph.kind) {
      case 'talker': {
        this.cues.cancel(this.reply); // the agent speaks: a reply waits for the end of its turn
        this.reply = null;
        if (ph.style === 'plain' || p.words.length <= FEW_WORDS) return;
        const share = ph.style === 'interrupter' ? 0.4 : 0.5;
        p.cue = this.cues.after(p.words.length * p.msPerWord * share, () => {
          p.cue = null;
          if (this.current !== p || this.speaking || this.phase !== ph) return;
          this.speak(ph.style === 'interrupter' ? INTERRUPTION : BACKCHANNELS[ph.backchannels++ % BACKCHANNELS.length]!);
        });
        return;
      }
      case 'voicemail':
        if (ph.stage !== 'recording') return;
        ph.spoke = true;
        p.recordFrom = 0;
        this.cues.cancel(ph.silence);
        ph.silence = null;
        return;
      case 'screener':
        if (ph.stage !== 'holding') p.screened = true;
        this.cues.cancel(this.reply);
        this.reply = null;
        return;
      case 'driven':
      case 'silent':
      case 'hang-up':
      case 'menu':
        return;
    }
  }

  /** A playback ended, naturally or cut. */
  private onPlaybackEnded(_p: Playback): void {
    const ph = this.phase;
    if (ph.kind !== 'hang-up' || ph.hangingUp) return;
    ph.hangingUp = true;
    this.cues.after(this.ctx.timing.replyPauseMs, () => this.farEndHangup('the far end hung up after the first thing the agent said'));
  }

  /** The agent stopped speaking: its queue drained, or its speech was stopped. */
  private onAgentTurnEnded(): void {
    if (this.status !== 'answered') return; // speech queued before the answer was dropped unheard
    const ph = this.phase;
    switch (ph.kind) {
      case 'talker':
        this.replyAfterPause(ph);
        return;
      case 'voicemail':
        if (ph.stage !== 'recording' || !ph.spoke) return;
        this.cues.cancel(ph.silence);
        ph.silence = this.cues.after(3 * this.ctx.timing.replyPauseMs, () => {
          if (!this.isPlaying()) this.farEndHangup('the voicemail recorded a message and hung up');
        });
        return;
      case 'screener':
        if (ph.stage === 'listening') this.screenerCheck(ph);
        return;
      case 'driven':
      case 'silent':
      case 'hang-up':
      case 'menu':
        return;
    }
  }

  private greetUnlessSpokenTo(): void {
    this.cues.cancel(this.reply);
    this.reply = this.cues.after(this.ctx.timing.replyPauseMs, () => {
      this.reply = null;
      if (!this.isPlaying() && !this.speaking && this.farQueue.length === 0) this.speak(TALKER_GREETING);
    });
  }

  /** The talker's next line, a pause after the agent's turn, unless someone speaks first. */
  private replyAfterPause(ph: Extract<Phase, { kind: 'talker' }>): void {
    // the far end is talking (it interrupted, or the sandbox API speaks): the next turn is the agent's
    if (this.speaking || this.farQueue.length > 0) return;
    this.cues.cancel(this.reply);
    this.reply = this.cues.after(this.ctx.timing.replyPauseMs, () => {
      this.reply = null;
      if (this.isPlaying() || this.speaking || this.phase !== ph || ph.line >= TALKER_SCRIPT.length) return;
      const line = TALKER_SCRIPT[ph.line++]!;
      const last = ph.line === TALKER_SCRIPT.length;
      this.speak(line, {
        afterwards: last
          ? () => this.cues.after(this.ctx.timing.replyPauseMs, () => this.farEndHangup('the far end said goodbye'))
          : undefined,
      });
    });
  }

  private voicemailBeep(ph: Extract<Phase, { kind: 'voicemail' }>): void {
    ph.stage = 'recording';
    this.beepAt = this.now();
    this.events.send((l) => l.beep());
    const p = this.current;
    if (p) {
      p.recordFrom = this.heardWords(p, performance.now());
      ph.spoke = true;
    }
    const pause = this.ctx.timing.replyPauseMs;
    this.cues.after(20 * pause, () => {
      if (!ph.spoke) this.farEndHangup('the voicemail heard no message and hung up');
    });
    this.cues.after(VOICEMAIL_MAX_WORDS * this.msPerWord(), () => this.farEndHangup('the voicemail message reached its limit'));
  }

  /** The screener moves on once the agent has said something and stopped. */
  private screenerCheck(ph: Extract<Phase, { kind: 'screener' }>): void {
    if (this.isPlaying() || !this.playbacks.some((p) => p.screened && p.heard !== '')) return;
    this.cues.cancel(this.reply);
    this.reply = this.cues.after(this.ctx.timing.replyPauseMs, () => {
      this.reply = null;
      if (this.isPlaying() || this.phase !== ph || ph.stage !== 'listening') return;
      ph.stage = 'holding';
      this.speak(SCREENER_HOLD, {
        afterwards: () =>
          this.cues.after(2 * this.ctx.timing.replyPauseMs, () => {
            if (this.phase !== ph) return;
            this.phase = phaseOf('talker');
            this.speak(SCREENER_HUMAN);
          }),
      });
    });
  }

  private menuPrompt(ph: Extract<Phase, { kind: 'menu' }>): void {
    ph.prompts++;
    this.speak(MENU_PROMPT, {
      afterwards: () => {
        this.cues.cancel(ph.noInput);
        ph.noInput = this.cues.after(10 * this.ctx.timing.replyPauseMs, () => {
          ph.noInput = null;
          if (this.phase !== ph || ph.stage !== 'choosing') return;
          if (ph.prompts < 3) {
            this.menuPrompt(ph);
            return;
          }
          ph.stage = 'goodbye';
          this.speak(MENU_GOODBYE, {
            afterwards: () => this.cues.after(this.ctx.timing.replyPauseMs, () => this.farEndHangup('the menu got no selection')),
          });
        });
      },
    });
  }

  private onAgentDigit(digit: string): void {
    const ph = this.phase;
    if (ph.kind !== 'menu' || ph.stage !== 'choosing') return;
    this.cues.cancel(ph.noInput);
    ph.noInput = null;
    // a key cuts the menu's own speech short, as a menu listens for keys while it talks
    if (this.speaking && !this.speaking.fromSandboxApi) this.finishUtterance(this.speaking, performance.now(), true);
    this.farQueue = this.farQueue.filter((u) => u.fromSandboxApi);
    const department = MENU_OPTIONS[digit];
    if (!department) {
      ph.prompts = 0; // a wrong key is an answer: the menu starts over
      this.menuPrompt(ph);
      return;
    }
    ph.stage = 'connecting';
    this.speak(menuConnecting(digit, department), {
      afterwards: () => {
        this.phase = phaseOf('talker');
        this.greetUnlessSpokenTo();
      },
    });
  }

  /** The far end stops following its persona (transferred away, bridged to a SIP endpoint). */
  private becomeDriven(): void {
    this.cues.clear();
    this.reply = null;
    if (this.current) this.current.cue = null;
    this.phase = { kind: 'driven' };
  }

  private stage(): string {
    const ph = this.phase;
    if (this.status !== 'answered') return this.status;
    switch (ph.kind) {
      case 'talker':
        return `talker: ${ph.line} of ${TALKER_SCRIPT.length} lines said`;
      case 'voicemail':
        return `voicemail: ${ph.stage}`;
      case 'screener':
        return `screener: ${ph.stage}`;
      case 'menu':
        return `menu: ${ph.stage}`;
      case 'hang-up':
        return ph.hangingUp ? 'hang-up: hanging up' : 'hang-up: waiting for the first playback';
      case 'driven':
        return this.bridgedTo ? `bridged to ${this.bridgedTo}` : this.transferring ? 'transferring' : 'driven by the sandbox API';
      case 'silent':
        return 'silent';
    }
  }

  // ---- helpers -------------------------------------------------------------------------------------------

  private requireConnected(): void {
    if (this.over) throw new TelephonyError('The call has ended', false);
    if (this.status !== 'answered') throw new TelephonyError('The call is not connected yet', false);
  }

  /** Waits on a leg timer; rejects when the leg ends first. */
  private wait(ms: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.add(reject);
      this.mechanics.after(ms, () => {
        this.waiting.delete(reject);
        resolve();
      });
    });
  }

  private rejectWaiting(err: Error): void {
    for (const reject of this.waiting) reject(err);
    this.waiting.clear();
  }

  private msPerWord(): number {
    return msPerWordAt(this.ctx.timing.wordsPerMinute);
  }

  /** A keypad tone and its gap: a word's time, at most 200 ms. */
  private toneMs(): number {
    return Math.min(200, this.msPerWord());
  }

  private now(): string {
    return this.ctx.clock.now().toISOString();
  }
}

/**
 * The sandbox voice engine (docs/sandbox.md#voice): the `VoiceEnginePort` of sandbox mode, simulating the
 * telephone network and the far end of every call in this process's memory. Dials are accepted at once and
 * progress on timers (ringing, then an answer or a failure); who answers and how they behave is chosen by the
 * dialled number (magic.ts). Inbound calls are rung in through `ringInbound`, and the sandbox API
 * (`say`, `pressDigits`, `hangupRemote`, `view`, `list`) drives and inspects the far end.
 */
export class SandboxVoiceEngine implements VoiceEnginePort {
  private readonly legs = new Map<string, SandboxLeg>();
  private readonly byCallId = new Map<string, string>();
  private readonly retired: string[] = [];
  private inbound: ((offer: InboundOffer) => Promise<InboundDecision>) | null = null;
  private closed = false;
  private readonly ctx: LegContext;
  private readonly keepEnded: number;

  constructor(timing: SandboxVoiceTiming, clock: ClockPort, log: LoggerPort, o: Readonly<{ keepEnded?: number }> = {}) {
    this.keepEnded = o.keepEnded ?? KEEP_ENDED_LEGS;
    this.ctx = { timing, clock, log, retire: (leg) => this.retire(leg) };
  }

  async dial(req: DialRequest, listener: LegListener): Promise<CallLeg> {
    if (this.closed) throw new TelephonyError('Telephony provider error: the sandbox voice engine is closed', true);
    for (const n of [req.from, req.to])
      if (!E164.test(n)) throw new TelephonyError(`Telephony provider error: ${JSON.stringify(n)} is not an E.164 number`, false);
    const persona = personaFor(req.to);
    if (persona === 'provider-error')
      throw new TelephonyError(`Telephony provider error: the call to ${req.to} was refused (sandbox magic number)`, true);
    const leg = this.add(
      { engineCallId: newEngineCallId(), callId: req.callId, direction: 'outbound', from: req.from, to: req.to, persona },
      listener,
    );
    const { ringMs, replyPauseMs } = this.ctx.timing;
    if (persona === 'invalid-number') {
      leg.schedule(replyPauseMs, () => leg.fail('invalid_number', 'The number is not in service.'));
      return leg;
    }
    leg.schedule(0, () => leg.ring());
    const noAnswer = () => leg.fail('no_answer', `No answer within ${req.ringTimeoutMs} ms.`);
    // an answer or a busy signal comes after the ring time, unless the ring timeout comes first
    if (persona === 'no-answer' || req.ringTimeoutMs <= ringMs) {
      leg.schedule(req.ringTimeoutMs, noAnswer);
      return leg;
    }
    if (persona === 'busy') leg.schedule(ringMs, () => leg.fail('busy', 'The line is busy.'));
    else leg.schedule(ringMs, () => leg.answer(PERSONA_NUMBERS[req.to]?.answeredBy ?? 'human'));
    return leg;
  }

  onInbound(handler: (offer: InboundOffer) => Promise<InboundDecision>): void {
    this.inbound = handler;
  }

  async close(): Promise<void> {
    this.closed = true;
    const live = [...this.legs.values()].filter((l) => l.live);
    for (const leg of live) leg.end('local_hangup', 'the voice engine closed');
    await Promise.all(live.map((l) => l.idle()));
  }

  /**
   * A phone (`from`) calls one of the platform's numbers (`to`): the call is offered to the `onInbound`
   * handler; accepted, it is answered at once (`answered('human')`). The caller follows the persona of its
   * number when that is a conversational one (magic.ts, INBOUND_PERSONAS); otherwise it speaks
   * only through `say`. Rejects with InboundCallRefusedError when the platform refuses or nothing takes calls.
   */
  async ringInbound(call: Readonly<{ from: string; to: string }>): Promise<{ callId: string; engineCallId: string }> {
    if (this.closed) throw new InboundCallRefusedError('the sandbox voice engine is closed');
    const handler = this.inbound;
    if (!handler) throw new InboundCallRefusedError('nothing in this process takes inbound calls (no call host registered)');
    const engineCallId = newEngineCallId();
    const decision = await handler({ engineCallId, from: call.from, to: call.to });
    if (!decision.accept) throw new InboundCallRefusedError(decision.reason);
    const leg = this.add(
      {
        engineCallId,
        callId: decision.callId,
        direction: 'inbound',
        from: call.from,
        to: call.to,
        persona: inboundPersonaFor(call.from) ?? 'driven',
      },
      decision.listener,
    );
    try {
      decision.onLeg(leg);
    } catch (err) {
      leg.end('local_hangup', 'the platform could not take the call');
      throw err;
    }
    leg.answer('human');
    return { callId: decision.callId, engineCallId };
  }

  /** The far end says `text` (SandboxCallNotFoundError, SandboxCallNotConnectedError). */
  say(callId: string, text: string): void {
    if (wordsOf(text).length === 0) throw new RangeError('say needs at least one word');
    this.connected(callId).farEndSay(text);
  }

  /** The far end presses keys (`0-9*#`): one `digitReceived` per key. */
  pressDigits(callId: string, digits: string): void {
    if (!DIGITS.test(digits)) throw new RangeError(`keypad keys are 0-9, * and #; got ${JSON.stringify(digits)}`);
    this.connected(callId).farEndPress(digits);
  }

  /** The far end hangs up (`ended('remote_hangup')`); an outbound call still ringing is declined (`failed('busy')`). */
  hangupRemote(callId: string): void {
    const leg = this.find(callId);
    if (!leg.live) throw new SandboxCallNotConnectedError(callId, leg.status);
    leg.farEndHangup('the far end hung up (sandbox API)');
  }

  /** The far end's view of a call, by the platform's call id or the engine's; null when unknown. */
  view(callId: string): SandboxCallView | null {
    return this.lookup(callId)?.view() ?? null;
  }

  /** Every call kept (live ones, and the most recent ended ones), newest first. */
  list(): SandboxCallView[] {
    return [...this.legs.values()].reverse().map((l) => l.view());
  }

  private add(init: LegInit, listener: LegListener): SandboxLeg {
    const leg = new SandboxLeg(init, listener, this.ctx);
    this.legs.set(leg.engineCallId, leg);
    this.byCallId.set(leg.callId, leg.engineCallId);
    return leg;
  }

  private lookup(callId: string): SandboxLeg | undefined {
    return this.legs.get(this.byCallId.get(callId) ?? callId);
  }

  private find(callId: string): SandboxLeg {
    const leg = this.lookup(callId);
    if (!leg) throw new SandboxCallNotFoundError(callId);
    return leg;
  }

  private connected(callId: string): SandboxLeg {
    const leg = this.find(callId);
    if (!leg.live || leg.status !== 'answered') throw new SandboxCallNotConnectedError(callId, leg.status);
    return leg;
  }

  /** An ended leg stays inspectable until `keepEnded` newer ones have ended. */
  private retire(leg: SandboxLeg): void {
    this.retired.push(leg.engineCallId);
    while (this.retired.length > this.keepEnded) {
      const id = this.retired.shift()!;
      const old = this.legs.get(id);
      this.legs.delete(id);
      if (old && this.byCallId.get(old.callId) === id) this.byCallId.delete(old.callId);
    }
  }
}

/** A provider-style call SID. */
const newEngineCallId = () => `CA${randomBytes(16).toString('hex')}`;

import { performance } from 'node:perf_hooks';
import {
  type AnsweredBy,
  type CallLeg,
  type DialFailure,
  LegEndedError,
  type LegEndReason,
  type LegListener,
  type PlaybackOptions,
  SipBridgeError,
  type StoppedPlayback,
  TelephonyError,
} from '../../../application/calls/voice-engine.port.js';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { LoggerPort } from '../../../application/ports/logger.port.js';
import { ListenerQueue } from '../../media/listener-queue.js';
import { AgentSpeech, NOTHING_STOPPED, type Playback } from './agent-speech.js';
import { bridgeOutcome, checkTransferTarget } from './bridging.js';
import { FarEndSpeech } from './far-end-speech.js';
import type { VoicePersona } from './magic.js';
import { FarEndPersona } from './personas.js';
import { DIGITS, msPerWordAt, Timers, toneMsAt, Waits } from './timing.js';
import type { SandboxCallView, SandboxLegStatus, SandboxVoiceTiming } from './types.js';
import { callView, type LegRecord } from './view.js';

export type LegContext = Readonly<{
  timing: SandboxVoiceTiming;
  clock: ClockPort;
  log: LoggerPort;
  retire: (leg: SandboxLeg) => void;
}>;

export type LegInit = Readonly<{
  engineCallId: string;
  callId: string;
  direction: 'outbound' | 'inbound';
  from: string;
  to: string;
  persona: VoicePersona | 'driven';
}>;

/**
 * One simulated leg: the platform's side is the `CallLeg` port; the far end is a persona (magic.ts, personas.ts) or
 * the sandbox API. The leg holds the network's timers and the order of the listener's calls, and joins the agent's
 * speech (agent-speech.ts), the far end's speech (far-end-speech.ts) and the persona that reacts to both.
 */
export class SandboxLeg implements CallLeg {
  private readonly rec: LegRecord;
  private readonly events: ListenerQueue;
  /** the network's timers (ringing, answer, speech, waits): dropped when the leg ends */
  private readonly mechanics = new Timers();
  /** the persona's timers: dropped when it stops following its script or the leg ends */
  private readonly cues = new Timers();
  private readonly waits = new Waits(this.mechanics);
  private readonly agent: AgentSpeech;
  private readonly far: FarEndSpeech;
  private readonly persona: FarEndPersona;
  private over = false;
  private stoppedAtEnd: StoppedPlayback = NOTHING_STOPPED;

  constructor(
    init: LegInit,
    listener: LegListener,
    private readonly ctx: LegContext,
  ) {
    this.rec = {
      ...init,
      createdAt: this.now(),
      status: 'dialing',
      answeredBy: null,
      failure: null,
      endReason: null,
      endDetail: null,
      ringingAt: null,
      answeredAt: null,
      endedAt: null,
      beepAt: null,
      digitsFromAgent: '',
      digitsFromFarEnd: '',
      transferring: false,
      transferredTo: null,
      bridgedTo: null,
      bridgeAttempts: [],
    };
    this.events = new ListenerQueue(listener, (err) =>
      ctx.log.error({ err, callId: init.callId, engineCallId: init.engineCallId }, 'sandbox voice: a leg listener threw'),
    );
    const now = () => this.now();
    this.agent = new AgentSpeech(ctx.timing.wordsPerMinute, {
      now,
      mechanics: this.mechanics,
      cues: this.cues,
      started: (p) => this.persona.onPlaybackStarted(p),
      finished: (p) => this.playbackFinished(p),
    });
    this.far = new FarEndSpeech({
      engineCallId: init.engineCallId,
      now,
      timers: this.mechanics,
      msPerWord: msPerWordAt(ctx.timing.wordsPerMinute),
      agentPlaying: () => this.agent.isPlaying(),
      speaker: () => this.persona.phase,
      live: () => !this.over,
      send: (call) => this.events.send(call),
    });
    this.persona = new FarEndPersona(init.persona, {
      timing: ctx.timing,
      cues: this.cues,
      say: (text, afterwards) => this.speak(text, { afterwards }),
      agentPlaying: () => this.agent.isPlaying(),
      currentPlayback: () => this.agent.current,
      heardWords: (p, mono) => this.agent.heardWords(p, mono),
      screenedSomething: () => this.agent.all.some((p) => p.screened && p.heard !== ''),
      farEndBusy: () => this.far.busy(),
      cutOwnSpeech: () => this.far.cutPersona(),
      beep: () => {
        this.rec.beepAt = this.now();
        this.events.send((l) => l.beep());
      },
      hangUp: (detail) => this.farEndHangup(detail),
    });
  }

  get engineCallId(): string {
    return this.rec.engineCallId;
  }
  get callId(): string {
    return this.rec.callId;
  }
  get status(): SandboxLegStatus {
    return this.rec.status;
  }
  get live(): boolean {
    return !this.over;
  }

  // ---- the port ------------------------------------------------------------------------------------------

  play(playbackId: string, text: string, o: PlaybackOptions): void {
    if (this.over) return; // the leg is gone and `ended` is on its way: nobody hears it
    this.agent.enqueue(playbackId, text, o);
    // speech queued before the answer starts when the far end picks up
    if (!this.agent.current && this.rec.status === 'answered') this.agent.startNext();
  }

  stopPlayback(): StoppedPlayback {
    if (this.over) {
      // what was heard when the leg ended, reported once
      const atEnd = this.stoppedAtEnd;
      this.stoppedAtEnd = NOTHING_STOPPED;
      return atEnd;
    }
    if (!this.agent.isPlaying()) return NOTHING_STOPPED;
    const started = this.agent.current;
    const { finished, stopped } = this.agent.settle(performance.now());
    if (finished) this.events.send((l) => l.playbackFinished(finished.id));
    for (const id of stopped.cut) this.events.send((l) => l.playbackFinished(id));
    if (started) this.persona.onPlaybackEnded();
    this.agentTurnEnded();
    return stopped;
  }

  isPlaying(): boolean {
    return this.agent.isPlaying();
  }

  async sendDigits(digits: string): Promise<void> {
    if (!DIGITS.test(digits)) throw new TelephonyError(`Keypad tones are 0-9, * and #; got ${JSON.stringify(digits)}`, false);
    this.requireConnected();
    for (const digit of digits) {
      await this.waits.for(this.toneMs());
      this.rec.digitsFromAgent += digit;
      this.persona.onAgentDigit(digit);
    }
  }

  async transfer(to: string): Promise<void> {
    this.requireConnected();
    checkTransferTarget(to);
    if (this.rec.transferring) throw new TelephonyError('A transfer of this call is already under way', false);
    this.rec.transferring = true;
    this.persona.becomeDriven(); // the far end is being connected elsewhere: it no longer reacts to the agent
    await this.waits.for(this.ctx.timing.replyPauseMs);
    this.rec.transferredTo = to;
    this.end('transferred', `transferred to ${to}`);
  }

  async bridge(sipUri: string): Promise<void> {
    // an inbound call routed to a trunk rings while its URIs are tried: it is answered when one answers
    if (this.over) throw new TelephonyError('The call has ended', false);
    if (this.rec.status !== 'answered' && this.rec.direction !== 'inbound') this.requireConnected();
    if (this.rec.bridgedTo) throw new TelephonyError(`The call is already bridged to ${this.rec.bridgedTo}`, false);
    const outcome = bridgeOutcome(sipUri);
    if (outcome.after !== 'none') await this.waits.for(outcome.after === 'ring' ? this.ctx.timing.ringMs : this.ctx.timing.replyPauseMs);
    if (outcome.refusal) {
      const { status, reason } = outcome.refusal;
      this.rec.bridgeAttempts.push({ sipUri, outcome: `SIP ${status} ${reason}`, at: this.now() });
      throw new SipBridgeError(sipUri, { kind: 'response', status, reason });
    }
    if (this.over) throw new LegEndedError('the caller hung up while the URI rang');
    this.rec.bridgedTo = sipUri;
    this.rec.bridgeAttempts.push({ sipUri, outcome: 'answered', at: this.now() });
    this.answer('human');
    this.persona.becomeDriven(); // the caller talks to the SIP endpoint now
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
    if (this.over || this.rec.status !== 'dialing') return;
    this.rec.status = 'ringing';
    this.rec.ringingAt = this.now();
    this.events.send((l) => l.ringing());
  }

  answer(by: AnsweredBy): void {
    if (this.over || this.rec.status === 'answered') return;
    this.rec.status = 'answered';
    this.rec.answeredBy = by;
    this.rec.answeredAt = this.now();
    this.events.send((l) => l.answered(by));
    if (this.agent.hasQueued()) this.agent.startNext();
    // the far end's pause runs from when the platform heard of the answer, as a person's runs from hearing the
    // line open: a platform that is slow to learn of it does not find the callee already talking
    void this.events.idle().then(() => {
      if (!this.over) this.persona.onAnswered();
    });
  }

  fail(reason: DialFailure, detail: string): void {
    if (this.over) return;
    this.agent.settle(performance.now()); // speech queued before an answer that never came is dropped
    this.over = true;
    this.rec.status = 'failed';
    this.rec.failure = { reason, detail };
    this.rec.endedAt = this.now();
    this.mechanics.clear();
    this.cues.clear();
    this.events.last((l) => l.failed(reason, detail));
    this.waits.rejectAll(new TelephonyError(`The call failed: ${detail}`, false));
    this.ctx.retire(this);
  }

  /** Ends the leg: what was playing is cut where it was, a far-end utterance under way is finalised, then `ended`. */
  end(reason: LegEndReason, detail: string | null): void {
    if (this.over) return;
    const mono = performance.now();
    const { finished, stopped } = this.agent.settle(mono);
    if (finished) this.events.send((l) => l.playbackFinished(finished.id));
    this.stoppedAtEnd = stopped;
    this.far.stop(mono);
    this.over = true;
    this.rec.status = 'ended';
    this.rec.endReason = reason;
    this.rec.endDetail = detail;
    this.rec.endedAt = this.now();
    this.mechanics.clear();
    this.cues.clear();
    this.events.last((l) => l.ended(reason, detail));
    this.waits.rejectAll(new TelephonyError('The call has ended', false));
    this.ctx.retire(this);
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
        this.rec.digitsFromFarEnd += digit;
        this.events.send((l) => l.digitReceived(digit));
        next();
      });
    };
    next();
  }

  /** The far end hangs up; while an outbound call still rings, the callee declines it (busy). */
  farEndHangup(detail: string): void {
    if (this.rec.status === 'answered') this.end('remote_hangup', detail);
    else if (this.rec.direction === 'outbound') this.fail('busy', 'The callee declined the call.');
    // a caller who hangs up while the trunk's URIs ring
    else this.end('remote_hangup', detail);
  }

  view(): SandboxCallView {
    return callView(this.rec, this.agent, this.far, this.stage());
  }

  /** Whether the agent has made at least `n` playbacks and none is queued or playing now, or the call is over. */
  agentQuietAfter(n: number): boolean {
    return this.over || (this.agent.all.length >= n && this.agent.current === null && !this.agent.hasQueued());
  }

  // ---- inside --------------------------------------------------------------------------------------------

  /** A playback played to its end: the next one starts, or the agent's turn is over. */
  private playbackFinished(p: Playback): void {
    if (this.over) return;
    this.events.send((l) => l.playbackFinished(p.id));
    this.persona.onPlaybackEnded();
    if (this.over) return;
    if (this.agent.hasQueued()) this.agent.startNext();
    else this.agentTurnEnded();
  }

  /** The agent stopped speaking: its queue drained, or its speech was stopped. */
  private agentTurnEnded(): void {
    if (this.rec.status !== 'answered') return; // speech queued before the answer was dropped unheard
    this.persona.onAgentTurnEnded();
  }

  private speak(text: string, o: { fromSandboxApi?: boolean; afterwards?: (() => void) | undefined }): void {
    if (this.over || this.rec.status !== 'answered') return; // nobody is on the line to speak yet
    this.far.say(text, o);
  }

  private stage(): string {
    if (this.rec.status !== 'answered') return this.rec.status;
    return (
      this.persona.stage() ??
      (this.rec.bridgedTo ? `bridged to ${this.rec.bridgedTo}` : this.rec.transferring ? 'transferring' : 'driven by the sandbox API')
    );
  }

  private requireConnected(): void {
    if (this.over) throw new TelephonyError('The call has ended', false);
    if (this.rec.status !== 'answered') throw new TelephonyError('The call is not connected yet', false);
  }

  private toneMs(): number {
    return toneMsAt(this.ctx.timing.wordsPerMinute);
  }

  private now(): string {
    return this.ctx.clock.now().toISOString();
  }
}

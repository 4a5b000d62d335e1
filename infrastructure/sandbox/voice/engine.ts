import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type CallLeg,
  type DialRequest,
  type InboundDecision,
  type InboundOffer,
  type LegListener,
  TelephonyError,
  type VoiceEnginePort,
} from '../../../application/calls/voice-engine.port.js';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { LoggerPort } from '../../../application/ports/logger.port.js';
import { type LegContext, type LegInit, SandboxLeg } from './leg.js';
import { inboundPersonaFor, PERSONA_NUMBERS, personaFor } from './magic.js';
import { DIGITS, E164, wordsOf } from './timing.js';
import {
  InboundCallRefusedError,
  KEEP_ENDED_LEGS,
  SandboxCallNotConnectedError,
  SandboxCallNotFoundError,
  type SandboxCallView,
  type SandboxVoiceTiming,
} from './types.js';

/** How often a wait for the agent to be quiet looks at the call (in memory). */
const QUIET_CHECK_MS = 10;

/**
 * The sandbox voice engine (docs/sandbox.md#voice): the `VoiceEnginePort` of sandbox mode, simulating the
 * telephone network and the far end of every call in this process's memory. Dials are accepted at once and
 * progress on timers (ringing, then an answer or a failure); who answers and how they behave is chosen by the
 * dialled number (magic.ts). Each call is a SandboxLeg (leg.ts). Inbound calls are rung in through `ringInbound`, and the sandbox API
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
    this.ringOut(leg, persona, req.to, req.ringTimeoutMs);
    return leg;
  }

  /** What the network does with a dialled call: the dialled number's persona decides (magic.ts). */
  private ringOut(leg: SandboxLeg, persona: ReturnType<typeof personaFor>, to: string, ringTimeoutMs: number): void {
    const { ringMs, replyPauseMs } = this.ctx.timing;
    if (persona === 'invalid-number') {
      leg.schedule(replyPauseMs, () => leg.fail('invalid_number', 'The number is not in service.'));
      return;
    }
    leg.schedule(0, () => leg.ring());
    const noAnswer = () => leg.fail('no_answer', `No answer within ${ringTimeoutMs} ms.`);
    // an answer or a busy signal comes after the ring time, unless the ring timeout comes first
    if (persona === 'no-answer' || ringTimeoutMs <= ringMs) {
      leg.schedule(ringTimeoutMs, noAnswer);
      return;
    }
    if (persona === 'busy') leg.schedule(ringMs, () => leg.fail('busy', 'The line is busy.'));
    else leg.schedule(ringMs, () => leg.answer(PERSONA_NUMBERS[to]?.answeredBy ?? 'human'));
  }

  /**
   * A customer's PBX sends a call out through its SIP trunk (docs/sandbox.md#calls-from-a-pbx): `fromTrunk` names the
   * trunks the sandbox API authenticated it with. The call is offered to the platform as the live SIP engine offers
   * one; accepted, it is dialled on this network to `to`, whose persona number decides whether it is busy, unanswered
   * or answered (a provider error refuses it). The far end is then driven by the sandbox API (`say`, `hangup`): it
   * talks to the PBX, not to an agent. Rejects with InboundCallRefusedError when the platform refuses.
   */
  async callFromPbx(call: Readonly<{ from: string; to: string; fromTrunk: NonNullable<InboundOffer['fromTrunk']> }>) {
    const engineCallId = newEngineCallId();
    const { leg, decision } = await this.offer(
      { engineCallId, ...call },
      { direction: 'outbound', from: call.from, to: call.to, persona: 'driven' },
    );
    const persona = personaFor(call.to);
    if (persona === 'provider-error') leg.schedule(0, () => leg.fail('provider_error', `the carrier refused the call to ${call.to}`));
    else this.ringOut(leg, persona, call.to, decision.ringTimeoutMs ?? this.ctx.timing.ringMs * 20);
    return { callId: decision.callId, engineCallId };
  }

  /**
   * Offers a call to the platform's `onInbound` handler and, accepted, holds its leg (`leg` says who the far end is);
   * rejects with InboundCallRefusedError when the platform refuses or nothing takes calls.
   */
  private async offer(
    offer: InboundOffer,
    init: Omit<LegInit, 'engineCallId' | 'callId'>,
  ): Promise<{ leg: SandboxLeg; decision: Extract<InboundDecision, { accept: true }> }> {
    if (this.closed) throw new InboundCallRefusedError('the sandbox voice engine is closed');
    const handler = this.inbound;
    if (!handler) throw new InboundCallRefusedError('nothing in this process takes inbound calls (no call host registered)');
    const decision = await handler(offer);
    if (!decision.accept) throw new InboundCallRefusedError(decision.reason);
    const leg = this.add({ engineCallId: offer.engineCallId, callId: decision.callId, ...init }, decision.listener);
    try {
      decision.onLeg(leg);
    } catch (err) {
      leg.end('local_hangup', 'the platform could not take the call');
      throw err;
    }
    return { leg, decision };
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
    const engineCallId = newEngineCallId();
    const { leg, decision } = await this.offer(
      { engineCallId, from: call.from, to: call.to },
      { direction: 'inbound', from: call.from, to: call.to, persona: inboundPersonaFor(call.from) ?? 'driven' },
    );
    // a call routed to a SIP trunk is answered when one of its URIs answers the bridge (docs/calls.md#sip-trunks)
    if (!decision.answerOnBridge) leg.answer('human');
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

  /**
   * Waits until the agent has made at least `n` playbacks on a call and is quiet, the call is over or unknown, `timeoutMs`
   * has passed or `signal` aborts: looked at in memory every QUIET_CHECK_MS (docs/sandbox.md#the-voice-sandbox-api-and-cli).
   */
  async waitForAgentQuiet(callId: string, n: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const until = performance.now() + timeoutMs;
    for (;;) {
      const leg = this.lookup(callId);
      const left = until - performance.now();
      if (!leg || leg.agentQuietAfter(n) || left <= 0 || signal?.aborted) return;
      await sleep(Math.min(QUIET_CHECK_MS, left), undefined, signal ? { signal } : {}).catch(() => undefined);
    }
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

import { callDecider } from '../../domain/call/call.decider.js';
import { type CallSettings, callStream, type DisconnectionReason } from '../../domain/call/call.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { ClockPort } from '../ports/clock.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { CallSession } from './call-session.js';
import type { CallSlots, SlotScopes } from './call-slots.js';
import type { RecordingStore } from './recordings.port.js';
import type { CallFacts, ReplySource } from './replies.js';
import {
  type CallLeg,
  type InboundDecision,
  type InboundOffer,
  type InboundRefusal,
  type LegListener,
  TelephonyError,
  type VoiceEnginePort,
} from './voice-engine.port.js';

/** Who holds a live call: refreshed while the session runs; an expired lease means its process is gone. */
export interface CallLeasesPort {
  hold(rows: readonly { callId: string; accountId: string }[], hostId: string, until: Date): Promise<void>;
  /** takes the lease of a call nobody holds; false when another process holds it (it dials the call, not this one) */
  claim(row: { callId: string; accountId: string }, hostId: string, until: Date): Promise<boolean>;
  /**
   * calls the store holds, not ended, that no process holds a lease on, placed before `placedBefore`
   * (docs/calls.md#how-a-call-ends), oldest first
   */
  unheld(placedBefore: Date, limit: number): Promise<{ callId: string; accountId: string }[]>;
  /** outbound calls placed and never dialled (no lease, no ringing yet), oldest first: what the dialler takes */
  undialled(limit: number): Promise<{ callId: string; accountId: string }[]>;
  drop(callId: string): Promise<void>;
  /** live calls whose lease ran out (their host stopped), oldest first */
  expired(now: Date, limit: number): Promise<{ callId: string; accountId: string; hostId: string }[]>;
}

/** A call ready to go on the line: its facts, settings, and the slots it holds. */
export type LiveCallPlan = CallFacts &
  Readonly<{
    agentName: string;
    settings: CallSettings;
    scopes: SlotScopes;
    ctx: RequestContext;
    ringTimeoutMs: number;
    /** an inbound call of a number routed to a SIP trunk: its origination URIs in the order they are tried */
    sipUris: readonly string[];
    /** the SIP trunk the call is routed to, or (an outbound call) came in through from the customer's PBX */
    sipTrunkId?: string | null;
    /** a call from the customer's PBX: where its INVITE came from (`sip:<address>:<port>`) */
    pbxSource?: string | null;
  }>;

/** How an inbound offer is turned into a call (the calls' commands decide; the host runs it). */
export type InboundPlanner = (offer: InboundOffer) => Promise<LiveCallPlan | { refuse: string; code?: InboundRefusal }>;

/**
 * The live calls of this process (docs/calls.md#the-live-session): it dials, answers inbound offers, keeps a lease
 * on every call it holds (so another process's sweeper ends them if this one dies), frees a call's slots when it
 * ends, and hangs up everything on shutdown.
 */
export class CallHost {
  private readonly sessions = new Map<string, { session: CallSession; plan: LiveCallPlan }>();
  /** ended calls whose slots and lease are being given back */
  private readonly releasing = new Map<string, Promise<void>>();
  private heartbeat: NodeJS.Timeout | null = null;
  private planner: InboundPlanner | null = null;

  constructor(
    private readonly deps: Readonly<{
      engine: VoiceEnginePort;
      exec: CommandExecutor;
      clock: ClockPort;
      ids: IdsPort;
      log: LoggerPort;
      slots: CallSlots;
      leases: CallLeasesPort;
      hostId: string;
      leaseMs: number;
      /**
       * whether this process places calls on the line: it holds the voice engine's lines (ROLE all or voice with the
       * SIP engine; every process in sandbox mode). A process that does not leaves a placed call to the dialler of
       * one that does (docs/calls.md#how-a-call-ends).
       */
      dials: boolean;
      repliesFor: (plan: LiveCallPlan) => ReplySource;
      /** keeps a bridged call's audio as its recording, before its end is recorded (docs/sip.md#recording-bridged-calls) */
      recordings?: RecordingStore;
      /** whether a failed write may succeed when tried again (docs/calls.md#the-live-session) */
      isTransient?: (err: unknown) => boolean;
    }>,
  ) {
    deps.engine.onInbound((offer) => this.offer(offer));
  }

  /** Who plans inbound calls (the calls' commands register themselves). */
  plansInboundWith(planner: InboundPlanner): void {
    this.planner = planner;
  }

  holds(callId: string): boolean {
    return this.sessions.has(callId);
  }

  /** Whether this process places calls on the line (see `dials` in the constructor). */
  get dials(): boolean {
    return this.deps.dials;
  }

  /**
   * Dials a placed call, once: the call's lease is claimed first, and a call another process holds is not dialled
   * here (null). A provider refusal ends it (`telephony_error`) and throws `TELEPHONY_PROVIDER_ERROR`.
   */
  async dial(plan: LiveCallPlan): Promise<CallSession | null> {
    if (!this.deps.dials) return null;
    const claimed = await this.deps.leases.claim({ callId: plan.callId, accountId: plan.accountId }, this.deps.hostId, this.leaseUntil());
    if (!claimed) return null;
    const session = await this.open(plan);
    try {
      const leg = await this.deps.engine.dial(
        { callId: plan.callId, from: plan.from, to: plan.to, ringTimeoutMs: plan.ringTimeoutMs, voice: plan.settings.voice },
        session,
      );
      session.attach(leg);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      session.failed('provider_error', message);
      await session.whenEnded;
      if (err instanceof TelephonyError)
        throw new DomainError('TELEPHONY_PROVIDER_ERROR', `The telephony provider refused the call: ${message}`);
      throw err;
    }
    return session;
  }

  /**
   * Puts a call whose far end has connected by itself (a browser joining a web call) on the line: the session
   * takes the leg `makeLeg` builds for it, and the leg reports the answer like any engine.
   */
  async join(plan: LiveCallPlan, makeLeg: (listener: LegListener) => CallLeg): Promise<CallSession> {
    const session = await this.open(plan);
    session.attach(makeLeg(session));
    return session;
  }

  /** Ends a call: hangs up the line when this process holds it, else records the end (its host is gone or elsewhere). */
  async end(ctx: RequestContext, callId: string, reason: DisconnectionReason, detail: string | null = null): Promise<void> {
    const live = this.sessions.get(callId);
    if (live) {
      await live.session.hangup(reason, detail);
      // the caller may place the next call as soon as this answers: its slots must be free by then
      await this.releasing.get(callId);
      return;
    }
    await this.deps.exec.execute(callDecider, callStream(callId), { type: 'EndCall', data: { callId, reason, detail } }, ctx);
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map(({ session }) => session.hangup('host_lost', 'the server shut down')));
    // give the slots back before the database goes away
    await Promise.all([...this.releasing.values()]);
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  private async offer(offer: InboundOffer): Promise<InboundDecision> {
    if (!this.planner) return { accept: false, reason: 'no call planner in this process' };
    const plan = await this.planner(offer).catch((err: unknown): { refuse: string; code: InboundRefusal } => ({
      refuse: err instanceof DomainError ? err.message : 'the call could not be taken',
      // a full cap is a busy line (docs/calls.md#limits)
      code:
        err instanceof DomainError && (err.code === 'NUMBER_CALL_LIMIT' || err.code === 'CALL_CONCURRENCY_LIMIT') ? 'busy' : 'unavailable',
    }));
    if ('refuse' in plan) return { accept: false, reason: plan.refuse, ...(plan.code ? { code: plan.code } : {}) };
    const session = await this.open(plan);
    return {
      accept: true,
      callId: plan.callId,
      listener: session,
      onLeg: (leg) => session.attach(leg),
      ...(offer.fromTrunk ? { ringTimeoutMs: plan.ringTimeoutMs } : {}),
      // a call routed to a SIP trunk is answered when a URI answers (docs/calls.md#sip-trunks)
      ...(plan.settings.mode === 'sip' && plan.direction === 'inbound' ? { answerOnBridge: true } : {}),
      ...(plan.settings.mode === 'sip' && plan.settings.recording ? { record: true } : {}),
    };
  }

  private async open(plan: LiveCallPlan): Promise<CallSession> {
    const session = new CallSession(plan, plan.ctx, {
      exec: this.deps.exec,
      clock: this.deps.clock,
      ids: this.deps.ids,
      log: this.deps.log,
      replies: this.deps.repliesFor(plan),
      ...(this.deps.isTransient ? { isTransient: this.deps.isTransient } : {}),
      ...(this.deps.recordings ? { recordings: this.deps.recordings } : {}),
      onEnded: (callId) => {
        const done = this.forget(callId);
        this.releasing.set(callId, done);
        void done.finally(() => this.releasing.delete(callId));
      },
    });
    this.sessions.set(plan.callId, { session, plan });
    try {
      await this.deps.leases.hold([{ callId: plan.callId, accountId: plan.accountId }], this.deps.hostId, this.leaseUntil());
    } catch (err) {
      // a call nobody could ever sweep must not go on the line: it ends now and gives its slots back
      await session.hangup('host_lost', 'the call could not be leased to this process');
      throw err;
    }
    this.beat();
    return session;
  }

  private async forget(callId: string): Promise<void> {
    const live = this.sessions.get(callId);
    this.sessions.delete(callId);
    if (this.sessions.size === 0 && this.heartbeat) {
      clearInterval(this.heartbeat);
      this.heartbeat = null;
    }
    if (!live) return;
    try {
      await this.deps.slots.release(live.plan.ctx, callId, live.plan.scopes);
      await this.deps.leases.drop(callId);
    } catch (err) {
      // the sweeper and the slot reactor finish what failed here
      this.deps.log.warn({ err, callId }, 'releasing an ended call failed');
    }
  }

  private leaseUntil(): Date {
    return new Date(this.deps.clock.now().getTime() + this.deps.leaseMs);
  }

  private beat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(
      () => {
        const rows = [...this.sessions.values()].map(({ plan }) => ({ callId: plan.callId, accountId: plan.accountId }));
        if (rows.length === 0) return;
        this.deps.leases
          .hold(rows, this.deps.hostId, this.leaseUntil())
          .catch((err: unknown) => this.deps.log.warn({ err }, 'renewing call leases failed'));
      },
      Math.max(100, Math.floor(this.deps.leaseMs / 3)),
    );
    this.heartbeat.unref();
  }
}

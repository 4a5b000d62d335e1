import { AGENT_DEFAULTS } from '../../domain/agent/agent.js';
import { callDecider } from '../../domain/call/call.decider.js';
import type { TransferCallerId } from '../../domain/call/call.js';
import { type CallDirection, callStream } from '../../domain/call/call.js';
import { DomainError } from '../../domain/shared/errors.js';
import { orderOriginationUris } from '../../domain/sip-trunk/routing.js';
import type { AccountQueries } from '../accounts/account-queries.port.js';
import type { AgentQueries, AgentView } from '../agents/agent-queries.port.js';
import type { NumberQueries, PhoneNumberView } from '../numbers/number-queries.port.js';
import type { ClockPort } from '../ports/clock.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { RequestContext } from '../shared/context.js';
import { type CommandExecutor, type Step, step } from '../shared/execute.js';
import type { SipTrunkQueries } from '../sip-trunks/sip-trunk-queries.port.js';
import type { CallHost, CallLeasesPort, LiveCallPlan } from './call-host.js';
import type { CallSession } from './call-session.js';
import { type CallOverrides, callSettings } from './call-settings.js';
import type { CallSlots } from './call-slots.js';
import type { CallLeg, InboundOffer, InboundRefusal, LegListener } from './voice-engine.port.js';

export type OutboundCallInput = CallOverrides &
  Readonly<{ agentId: string; toNumber: string; fromNumberId?: string | null; subject?: string | null }>;

export type WebCallInput = Readonly<{
  agentId: string;
  metadata?: Readonly<Record<string, unknown>> | null;
  variables?: Readonly<Record<string, string>> | null;
}>;

/** What redeeming a web call's access token gives: its call, or why it opens nothing. */
export type RedeemedToken = Readonly<{ callId: string; accountId: string }> | Readonly<{ refused: 'unknown' | 'expired' | 'used' }>;

/** Short-lived, single-use access tokens of web calls (stored hashed). */
export interface WebCallTokensPort {
  /** stores the token's hash (never the token) until it expires */
  issue(o: { callId: string; accountId: string; token: string; expiresAt: Date }): Promise<void>;
  /** the call the token opens, once and only before it expires (two redeemers at once: one wins) */
  redeem(token: string, now: Date): Promise<RedeemedToken>;
}

/** A web call a browser has joined: what its leg needs to know. */
export type JoinedWebCall = Readonly<{ callId: string; accountId: string; agentId: string | null; voice: string }>;

const TOKEN_REFUSALS: Record<'unknown' | 'expired' | 'used', string> = {
  unknown: 'Unknown access token: create a web call (POST /v1/calls/web) and join with the accessToken it answers',
  expired: 'The access token has expired (it is valid for 30 seconds): create a new web call',
  used: 'The access token has already been used (each joins once): create a new web call',
};

export type CallCommandsDeps = Readonly<{
  exec: CommandExecutor;
  ids: IdsPort;
  clock: ClockPort;
  agents: AgentQueries;
  numbers: NumberQueries;
  trunks: SipTrunkQueries;
  accounts: AccountQueries;
  slots: CallSlots;
  host: CallHost;
  leases: CallLeasesPort;
  webTokens: WebCallTokensPort;
  recordingActive: (accountId: string, at: Date) => Promise<boolean>;
  /** a number in [0, 1), for the weighted choice among SIP URIs of one priority */
  random: () => number;
  limits: Readonly<{ maxDurationSeconds: number; ringTimeoutMs: number; webTokenTtlMs: number }>;
}>;

const invalid = (field: string, message: string) => new DomainError('VALIDATION_ERROR', message, [{ field, message, type: 'value_error' }]);

/**
 * Placing, answering and ending calls (docs/calls.md#placing-a-call). A call first takes its slots (the caps),
 * then is recorded as placed, then goes on the line in this process's call host.
 */
export class CallCommands {
  constructor(private readonly d: CallCommandsDeps) {
    d.host.plansInboundWith((offer) => this.planInbound(offer));
  }

  async placeOutbound(ctx: RequestContext, input: OutboundCallInput): Promise<string> {
    const agent = await this.agent(ctx, input.agentId);
    const number = await this.callerNumber(ctx, agent, input.fromNumberId ?? null);
    if (input.variables && Object.keys(input.variables).length > 0 && !input.systemPrompt && agent.voiceMode !== 'hosted')
      throw invalid('variables', 'variables need a systemPrompt or a hosted-mode agent');
    if (input.toNumber === number.phoneNumber) throw invalid('toNumber', 'A number cannot call itself');
    const account = await this.d.accounts.get(ctx.accountId);
    const callId = this.d.ids.id('call');
    const plan = await this.plan(ctx, {
      callId,
      direction: 'outbound',
      agent,
      number,
      from: number.phoneNumber,
      to: input.toNumber,
      overrides: input,
      scopes: { accounts: [ctx.accountId, ...(account?.parentAccountId ? [account.parentAccountId] : [])], numberId: number.id },
    });
    // a write stored but not yet in the read models (503 READ_MODEL_TIMEOUT) is a placed call all the same: it is
    // dialled, and the request answers the 503 after (docs/calls.md#how-a-call-ends)
    const stored = await this.start(plan).then(
      () => null,
      (err: unknown) => {
        if (writeStored(err)) return err;
        throw err;
      },
    );
    // a process that holds no lines (ROLE=api with the SIP engine) leaves the call to a voice process's dialler
    if (this.d.host.dials) await this.d.host.dial(plan);
    if (stored) throw stored;
    return callId;
  }

  /**
   * A call the store holds that no process holds (docs/calls.md#how-a-call-ends): placed by a request whose process
   * stopped before it dialled, or left by a process that never leased it. An outbound call never dialled is dialled
   * now, from its stored facts; anything else (a web call nobody joined, a call that was on the line) ends.
   * Answers what was done.
   */
  async recover(callId: string, accountId: string, actor: string): Promise<'dialled' | 'ended' | 'held' | 'none'> {
    const { state } = await this.d.exec.state(callDecider, callStream(callId));
    if (state.status !== 'live' || state.accountId !== accountId) return 'none';
    const ctx: RequestContext = { accountId, requestId: null, correlationId: this.d.ids.uuid(), actor };
    if (state.direction === 'outbound' && state.phase === 'placed' && !this.d.host.dials) {
      // dialling is a voice process's (its dialler takes the call); nobody did within the ring time: none is running
      const waitedMs = this.d.clock.now().getTime() - Date.parse(state.placedAt);
      if (waitedMs < this.d.limits.ringTimeoutMs) return 'held';
      await this.d.host.end(
        ctx,
        callId,
        'host_lost',
        'no process that places calls (ROLE=voice or all) dialled it: start one with the SIP engine (docs/sip.md#roles)',
      );
      return 'ended';
    }
    if (state.direction === 'outbound' && state.phase === 'placed') {
      const agent = state.agentId ? await this.d.agents.get(accountId, state.agentId) : null;
      const account = await this.d.accounts.get(accountId);
      const plan: LiveCallPlan = {
        callId,
        accountId,
        agentId: state.agentId,
        agentName: agent?.name ?? 'the agent',
        numberId: state.numberId,
        from: state.from,
        to: state.to,
        direction: 'outbound',
        settings: state.settings,
        scopes: { accounts: [accountId, ...(account?.parentAccountId ? [account.parentAccountId] : [])], numberId: state.numberId },
        ctx,
        ringTimeoutMs: this.d.limits.ringTimeoutMs,
        sipUris: [],
      };
      try {
        // held since it was placed (reserving again is a no-op); a call whose slots were given back takes them again
        await this.d.slots.reserve(ctx, callId, plan.scopes);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        await this.d.host.end(ctx, callId, 'canceled', `it was never dialled, and its caps are full now: ${err.message}`);
        return 'ended';
      }
      return (await this.d.host.dial(plan)) ? 'dialled' : 'held';
    }
    const web = state.direction === 'web' && state.phase === 'placed';
    await this.d.host.end(
      ctx,
      callId,
      web ? 'canceled' : 'host_lost',
      web ? 'the web call was not joined, and no process held it' : 'no process held the call',
    );
    return 'ended';
  }

  /** A browser call (docs/calls.md#web-calls): placed now, joined with a 30-second single-use token. */
  async createWebCall(ctx: RequestContext, input: WebCallInput): Promise<{ callId: string; accessToken: string; expiresAt: string }> {
    const agent = await this.agent(ctx, input.agentId);
    if (input.variables && Object.keys(input.variables).length > 0 && agent.voiceMode !== 'hosted')
      throw invalid('variables', 'variables need a hosted-mode agent');
    const callId = this.d.ids.id('call');
    const plan = await this.plan(ctx, {
      callId,
      direction: 'web',
      agent,
      number: null,
      from: 'web',
      to: agent.id,
      overrides: { variables: input.variables ?? null, metadata: input.metadata ?? null },
      scopes: { accounts: [], numberId: null },
    });
    const accessToken = `wct_${this.d.ids.uuid()}${this.d.ids.uuid()}`.replaceAll('-', '');
    const expiresAt = new Date(this.d.clock.now().getTime() + this.d.limits.webTokenTtlMs);
    await this.d.webTokens.issue({
      callId,
      accountId: ctx.accountId,
      token: accessToken,
      expiresAt,
    });
    await this.d.exec.executeTogether([this.placing(plan)]);
    // nobody holds it until a browser joins; unjoined, the sweeper ends it when the token has expired
    await this.d.leases.hold([{ callId, accountId: ctx.accountId }], 'web-pending', expiresAt);
    return { callId, accessToken, expiresAt: expiresAt.toISOString() };
  }

  /**
   * A browser joins its web call (docs/calls.md#joining-a-web-call): the access token is redeemed (once, before it
   * expires), and the call goes on the line in this process with the browser as its leg, answered at once.
   */
  async joinWebCall(accessToken: string, makeLeg: (call: JoinedWebCall, listener: LegListener) => CallLeg): Promise<CallSession> {
    const redeemed = await this.d.webTokens.redeem(accessToken, this.d.clock.now());
    if ('refused' in redeemed) throw new DomainError('WEB_CALL_TOKEN_INVALID', TOKEN_REFUSALS[redeemed.refused]);
    const { state } = await this.d.exec.state(callDecider, callStream(redeemed.callId));
    if (state.status !== 'live' || state.direction !== 'web' || state.phase === 'answered')
      throw new DomainError('CALL_NOT_LIVE', 'The web call has ended: create a new one');
    const ctx: RequestContext = {
      accountId: state.accountId,
      requestId: null,
      correlationId: this.d.ids.uuid(),
      actor: 'system:web-call',
    };
    const agent = state.agentId ? await this.d.agents.get(state.accountId, state.agentId) : null;
    const plan: LiveCallPlan = {
      callId: state.callId,
      accountId: state.accountId,
      agentId: state.agentId,
      agentName: agent?.name ?? 'the agent',
      numberId: null,
      from: state.from,
      to: state.to,
      direction: 'web',
      settings: state.settings,
      // web calls take no slots (docs/calls.md#limits)
      scopes: { accounts: [], numberId: null },
      ctx,
      ringTimeoutMs: this.d.limits.ringTimeoutMs,
      sipUris: [],
    };
    const joined: JoinedWebCall = { callId: state.callId, accountId: state.accountId, agentId: state.agentId, voice: state.settings.voice };
    return this.d.host.join(plan, (listener) => makeLeg(joined, listener));
  }

  async end(ctx: RequestContext, callId: string): Promise<void> {
    const { state } = await this.d.exec.state(callDecider, callStream(callId));
    if (state.status === 'none' || state.accountId !== ctx.accountId) throw new DomainError('CALL_NOT_FOUND', 'Call not found');
    if (state.status !== 'live') return;
    await this.d.host.end(ctx, callId, 'ended_by_api', 'POST /v1/calls/{id}/end');
  }

  /** A parent's cap on one sub-account's live outbound calls (docs/calls.md#limits); null restores the default. */
  async setSubAccountCallLimit(ctx: RequestContext, subAccountId: string, limit: number | null): Promise<void> {
    const sub = await this.d.accounts.get(subAccountId);
    if (!sub || sub.parentAccountId !== ctx.accountId) throw new DomainError('NOT_FOUND', 'Sub-account not found');
    await this.d.slots.setAccountLimit(ctx, subAccountId, limit);
  }

  async subAccountCallLimit(ctx: RequestContext, subAccountId: string): Promise<{ limit: number; live: number; own: boolean }> {
    const sub = await this.d.accounts.get(subAccountId);
    if (!sub || sub.parentAccountId !== ctx.accountId) throw new DomainError('NOT_FOUND', 'Sub-account not found');
    return this.d.slots.accountLimit(subAccountId);
  }

  /** An inbound call on one of the platform's numbers: its agent answers, or its SIP trunk takes it. */
  private async planInbound(offer: InboundOffer): Promise<LiveCallPlan | { refuse: string; code: InboundRefusal }> {
    if (offer.fromTrunk) return this.planFromPbx(offer, offer.fromTrunk);
    const number = await this.d.numbers.activeByPhoneNumber(offer.to);
    if (!number) return { refuse: `${offer.to} is not an active number of this platform`, code: 'unknown_number' };
    const ctx: RequestContext = {
      accountId: number.accountId,
      requestId: null,
      correlationId: this.d.ids.uuid(),
      actor: 'system:voice-engine',
    };
    if (!number.agentId && !number.sipTrunkId) return { refuse: `no agent answers ${offer.to}`, code: 'unavailable' };
    const agent = number.agentId ? await this.d.agents.get(number.accountId, number.agentId) : null;
    if (!agent && !number.sipTrunkId) return { refuse: `no agent answers ${offer.to}`, code: 'unavailable' };
    const plan = await this.plan(ctx, {
      callId: this.d.ids.id('call'),
      direction: 'inbound',
      agent,
      number,
      from: offer.from,
      to: offer.to,
      overrides: {},
      scopes: { accounts: [], numberId: number.id },
    });
    await this.start(plan);
    return plan;
  }

  /**
   * A call the customer's PBX sends through the termination side of its SIP trunk, out through the carrier
   * (docs/sip.md#calls-from-your-pbx): the caller id must be an active number routed to a trunk the INVITE
   * authenticated with; the call is then an outbound call of that number's account, under the same caps as one
   * placed through the API, recorded as placed and as having come in through the trunk before it is dialled.
   */
  private async planFromPbx(
    offer: InboundOffer,
    from: NonNullable<InboundOffer['fromTrunk']>,
  ): Promise<LiveCallPlan | { refuse: string; code: InboundRefusal }> {
    const number = await this.d.numbers.activeByPhoneNumber(offer.from);
    if (!number?.sipTrunkId || !from.trunkIds.includes(number.sipTrunkId))
      return { refuse: `the caller id ${offer.from} is no number routed to the SIP trunk the call came in through`, code: 'forbidden' };
    if (offer.to === number.phoneNumber) return { refuse: 'a number cannot call itself', code: 'forbidden' };
    const ctx: RequestContext = {
      accountId: number.accountId,
      requestId: null,
      correlationId: this.d.ids.uuid(),
      actor: `system:sip-trunk:${number.sipTrunkId}`,
    };
    const account = await this.d.accounts.get(number.accountId);
    const plan = await this.plan(ctx, {
      callId: this.d.ids.id('call'),
      direction: 'outbound',
      agent: null,
      number,
      from: number.phoneNumber,
      to: offer.to,
      overrides: {},
      scopes: { accounts: [number.accountId, ...(account?.parentAccountId ? [account.parentAccountId] : [])], numberId: number.id },
      fromPbx: true,
    });
    await this.start(plan);
    // the session records where it came from first (docs/sip.md#calls-from-your-pbx)
    return { ...plan, pbxSource: from.source };
  }

  private async plan(
    ctx: RequestContext,
    o: {
      callId: string;
      direction: CallDirection;
      agent: AgentView | null;
      number: PhoneNumberView | null;
      from: string;
      to: string;
      overrides: CallOverrides;
      scopes: LiveCallPlan['scopes'];
      /** a call from the customer's PBX out through its trunk: bridged by the engine, no agent speaks */
      fromPbx?: boolean;
    },
  ): Promise<LiveCallPlan> {
    const trunk = o.number?.sipTrunkId ? await this.d.trunks.get(ctx.accountId, o.number.sipTrunkId) : null;
    const sipInbound = o.direction === 'inbound' && trunk !== null;
    const recordingActive = await this.d.recordingActive(ctx.accountId, this.d.clock.now());
    const agent = o.agent ?? placeholderAgent(ctx.accountId);
    const settings = callSettings(agent, o.overrides, {
      sip: sipInbound || o.fromPbx === true,
      trunkTransfers: trunk ? (trunk.transfers as 'all' | 'sip' | 'none') : null,
      ...(trunk ? { trunkTransferCallerId: trunk.transferCallerId as TransferCallerId } : {}),
      recordingActive,
      maxDurationSeconds: this.d.limits.maxDurationSeconds,
    });
    return {
      callId: o.callId,
      accountId: ctx.accountId,
      agentId: o.agent?.id ?? null,
      agentName: agent.name,
      numberId: o.number?.id ?? null,
      from: o.from,
      to: o.to,
      direction: o.direction,
      settings,
      scopes: o.scopes,
      ctx,
      ringTimeoutMs: this.d.limits.ringTimeoutMs,
      sipUris: sipInbound ? orderOriginationUris(trunk.uris, this.d.random) : [],
      sipTrunkId: sipInbound || o.fromPbx ? (trunk?.id ?? null) : null,
    };
  }

  /**
   * Takes the call's slots and records it as placed, together (docs/calls.md#limits): embedded in one append, so a
   * full cap writes nothing; elsewhere one after the other, and a refused record gives the slots back. A record
   * that was stored (only the wait for the read models failed) keeps them: the call is placed.
   */
  private async start(plan: LiveCallPlan): Promise<void> {
    const place = this.placing(plan);
    await this.d.exec.executeTogether([...this.d.slots.steps(plan.ctx, plan.callId, plan.scopes), place], async (err, written) => {
      if (!(written.includes(place) && writeStored(err))) await this.d.slots.giveBack(plan.ctx, plan.callId, written);
    });
  }

  /** The command that records the call as placed. */
  private placing(plan: LiveCallPlan): Step {
    return step(
      callDecider,
      callStream(plan.callId),
      {
        type: 'PlaceCall',
        data: {
          callId: plan.callId,
          accountId: plan.accountId,
          direction: plan.direction,
          agentId: plan.agentId,
          numberId: plan.numberId,
          from: plan.from,
          to: plan.to,
          settings: plan.settings,
        },
      },
      plan.ctx,
      // the API answers outbound and web calls from the read model; an inbound call answers the engine only
      { readYourWrites: plan.direction !== 'inbound' },
    );
  }

  private async agent(ctx: RequestContext, agentId: string): Promise<AgentView> {
    const agent = await this.d.agents.get(ctx.accountId, agentId);
    if (!agent) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
    return agent;
  }

  private async callerNumber(ctx: RequestContext, agent: AgentView, fromNumberId: string | null): Promise<PhoneNumberView> {
    const attached = await this.d.numbers.attachedTo(ctx.accountId, agent.id);
    if (fromNumberId !== null && !attached.includes(fromNumberId)) throw invalid('fromNumberId', 'The number must belong to the agent');
    const id = fromNumberId ?? attached[0];
    if (!id) throw invalid('agentId', 'The agent has no phone number to call from: attach one first');
    const number = await this.d.numbers.get(ctx.accountId, id);
    if (number?.status !== 'active') throw invalid('fromNumberId', 'The number is not active');
    return number;
  }
}

/** The write was stored and only the wait for the read models failed: what it recorded stands. */
const writeStored = (err: unknown): boolean => err instanceof DomainError && err.code === 'READ_MODEL_TIMEOUT';

/** A number routed to a SIP trunk may have no agent: its calls are bridged, and the call record names no agent. */
function placeholderAgent(accountId: string): AgentView {
  return { ...AGENT_DEFAULTS, enableMessaging: false, id: '', name: `SIP routing of ${accountId}`, voice: '', createdAt: '', numbers: [] };
}

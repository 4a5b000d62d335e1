import { webhookEventTypes } from '../../domain/webhook/webhook.decider.js';
import { deliveryIdFor, receives } from '../../domain/webhook/webhook.js';
import {
  type WebhookDeliveryCommand,
  webhookDeliveryDecider,
  webhookDeliveryStream,
} from '../../domain/webhook/webhook-delivery.decider.js';
import type { Checkpoint, EventStorePort, RecordedEvent } from '../ports/event-store.port.js';
import { compareCheckpoints } from '../ports/event-store.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import type { Reactor } from '../shared/process-manager.js';
import { buildEnvelope } from './envelope.js';
import type { WebhookDescription, WebhookEventRegistry, WebhookMapping } from './registry.js';
import {
  type AttemptHandoverPort,
  type ConversationContextPort,
  type PayloadContext,
  type PreparedAttempt,
  pickWebhook,
  type WebhookQueries,
  type WebhookView,
} from './webhook.port.js';

export const WEBHOOK_ACTOR = 'system:webhooks';

type Lookup = (accountId: string, agentId: string | null) => Promise<WebhookView[]>;
/** An event that a webhook event is mapped to, with what it says of itself. */
type Described = Readonly<{ e: RecordedEvent; mapping: WebhookMapping; d: WebhookDescription }>;
type Schedule = Readonly<{
  input: Extract<CommandInput<WebhookDeliveryCommand>, { type: 'ScheduleDelivery' }>;
  ctx: RequestContext;
  target: WebhookView;
}>;

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}

/**
 * The dispatch reactor: for every domain event the registry maps, find the one webhook it goes to (the
 * agent's own, else the account's master; none, disabled, or not listing the event: nothing) and schedule a delivery on its own
 * stream, first attempt due at once. The delivery id derives from the source event id, so running a batch
 * again (after a crash before the checkpoint moved) schedules nothing twice.
 */
export class WebhookDispatcher implements Reactor {
  readonly name = 'webhook_dispatch';
  /**
   * What the last look found: with the webhooks projected up to `projected`, no configuration event lay after it up
   * to `clearTo`. Every event up to a batch's checkpoint was visible when the batch was read, so none can appear there
   * later, and the next look starts at `clearTo` instead of at the projector's checkpoint (which stays where the
   * last configuration change was while nothing else moves it: reading from it scanned the whole log since).
   */
  private clear: { projected: Checkpoint; clearTo: Checkpoint } | null = null;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly store: EventStorePort,
    private readonly registry: WebhookEventRegistry,
    private readonly webhooks: WebhookQueries,
    private readonly context: ConversationContextPort,
    private readonly log: LoggerPort,
    private readonly o: {
      concurrency?: number;
      configWaitMs?: number;
      /** this process's delivery worker, which takes first attempts as they are scheduled; none: all go by the timeline */
      handover?: AttemptHandoverPort | null;
    } = {},
  ) {}

  get handles(): string[] {
    return this.registry.types();
  }

  async handleBatch(batch: readonly RecordedEvent[]): Promise<void> {
    if (batch.length === 0) return;
    await this.configCaughtUp(batch.at(-1)!.checkpoint);
    // the batch's webhooks are looked up once per account, its payloads' context in one go, its deliveries
    // scheduled in one append
    const described = batch.flatMap((e) => {
      const x = this.describe(e);
      return x ? [x] : [];
    });
    const scheduled = await this.plan(described, await this.lookUpWebhooks(described));
    await this.scheduleAll(scheduled);
    for (const s of scheduled)
      this.log.debug(
        { deliveryId: s.input.data.deliveryId, event: s.input.data.eventType, source: s.ctx.causationId },
        'webhook delivery scheduled',
      );
  }

  /**
   * Schedules the batch's deliveries in one append. As many first attempts as this process's worker has free slots
   * for are scheduled already claimed by it and handed to it at once (docs/webhooks.md#the-first-attempt-handed-over);
   * the others wait on the timeline for a claim. Only a delivery this call scheduled is handed over: one scheduled
   * before (the batch run again) may be in another worker's hands.
   */
  private async scheduleAll(scheduled: readonly Schedule[]): Promise<void> {
    if (scheduled.length === 0) return;
    const handover = this.o.handover ?? null;
    const reserved = handover?.reserve(scheduled.length) ?? null;
    /** the deliveries scheduled with the reserved claim, by stream */
    const claimed = new Map<string, Schedule>();
    const items = scheduled.map((s, i) => {
      const stream = webhookDeliveryStream(s.input.data.deliveryId);
      if (!reserved || i >= reserved.count) return { stream, input: s.input, ctx: s.ctx };
      claimed.set(stream, s);
      return { stream, input: { ...s.input, data: { ...s.input.data, firstAttemptClaim: reserved.claim } }, ctx: s.ctx };
    });
    const handed: PreparedAttempt[] = [];
    try {
      await this.exec.executeMany(webhookDeliveryDecider, items, {
        // a stream written here was scheduled by this call (a delivery scheduled before decides nothing)
        written: (stream, { state, revision }) => {
          const s = claimed.get(stream);
          if (!s || !reserved) return;
          const claim = { deliveryId: s.input.data.deliveryId, accountId: s.ctx.accountId, attempt: 1, claimedUntil: reserved.claim.until };
          handed.push({ claim, stream, state, revision, webhook: s.target });
        },
      });
    } finally {
      if (reserved) handover?.handOver(handed, reserved.count);
    }
  }

  /** The webhooks the batch's events may go to: one look-up per account, for all the agents its events are about. */
  private async lookUpWebhooks(described: readonly Described[]): Promise<Lookup> {
    const agentsOf = new Map<string, Set<string>>();
    for (const { e, d } of described) {
      const agents = agentsOf.get(e.metadata.accountId) ?? new Set<string>();
      if (d.agentId) agents.add(d.agentId);
      agentsOf.set(e.metadata.accountId, agents);
    }
    const found = new Map<string, WebhookView[]>();
    await forEachLimited([...agentsOf], this.o.concurrency ?? 8, async ([accountId, agents]) => {
      found.set(accountId, await this.webhooks.candidates(accountId, [...agents]));
    });
    return async (accountId, agentId) => (found.get(accountId) ?? []).filter((w) => w.agentId === null || w.agentId === agentId);
  }

  /**
   * Waits until every webhook configuration change logged before `checkpoint` is in the read model, so an
   * event is never missed because the webhooks projector runs behind this reactor. Gives up (the reactor
   * restarts from its checkpoint) after `configWaitMs`.
   */
  private async configCaughtUp(checkpoint: string): Promise<void> {
    const deadline = Date.now() + (this.o.configWaitMs ?? 10_000);
    for (;;) {
      const projected = await this.webhooks.configCheckpoint();
      // a projector rebuilt since (its checkpoint went back) has to be looked at from where it is
      const c = this.clear;
      const from =
        c && compareCheckpoints(projected, c.projected) >= 0 && compareCheckpoints(c.clearTo, projected) > 0 ? c.clearTo : projected;
      const [next] = await this.store.readAll({ after: from, maxCount: 1, filter: { eventTypes: webhookEventTypes } });
      if (!next || compareCheckpoints(next.checkpoint, checkpoint) > 0) {
        if (compareCheckpoints(checkpoint, from) > 0) this.clear = { projected, clearTo: checkpoint };
        return;
      }
      if (Date.now() > deadline) throw new Error('webhook configurations are not projected up to the events to dispatch');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Schedules the event's delivery on its own; returns the delivery id, or null when the event goes nowhere. */
  async dispatch(e: RecordedEvent): Promise<string | null> {
    const x = this.describe(e);
    const [s] = x ? await this.plan([x], (accountId, agentId) => this.webhooks.candidates(accountId, agentId ? [agentId] : [])) : [];
    if (!s) return null;
    await this.exec.execute(webhookDeliveryDecider, webhookDeliveryStream(s.input.data.deliveryId), s.input, s.ctx);
    return s.input.data.deliveryId;
  }

  /** The event's mapping and what it says of itself; null when no webhook event is mapped to it. */
  private describe(e: RecordedEvent): Described | null {
    const mapping = this.registry.get(e.type);
    const d = mapping?.describe(e) ?? null;
    return mapping && d ? { e, mapping, d } : null;
  }

  /**
   * What the events' deliveries are: the webhook each goes to (none: it goes nowhere) and its envelope, with the
   * context of every payload looked up at once.
   */
  private async plan(described: readonly Described[], lookup: Lookup): Promise<Schedule[]> {
    const targeted: { x: Described; target: WebhookView }[] = [];
    for (const x of described) {
      const target = pickWebhook(await lookup(x.e.metadata.accountId, x.d.agentId), x.d.agentId, x.e.checkpoint);
      // a webhook receives only the events it lists (docs/webhooks.md#choosing-events)
      if (target && target.status !== 'disabled' && receives(target.events, x.mapping.event)) targeted.push({ x, target });
    }
    if (targeted.length === 0) return [];
    const contexts = await this.context.contexts(
      targeted.map(({ x: { e, d }, target }) => ({
        accountId: e.metadata.accountId,
        conversationId: d.conversationId,
        limit: target.contextLimit,
        excludeMessageId: d.messageId,
        contactNumber: d.contactNumber ?? null,
      })),
    );
    return targeted.map(({ x, target }, i) => this.schedule(x, target, contexts[i]!));
  }

  /** The delivery of one event to its webhook. */
  private schedule({ e, mapping, d }: Described, target: WebhookView, context: PayloadContext): Schedule {
    const body = buildEnvelope({
      event: mapping.event,
      channel: d.channel,
      timestamp: e.createdAt,
      agentId: d.agentId,
      data: d.contactNumber ? { ...d.data, contact: context.contact } : d.data,
      conversationState: context.conversationState,
      recentHistory: context.recentHistory,
      contextLimit: target.contextLimit,
    });

    const deliveryId = deliveryIdFor(e.id);
    // the first attempt is due at once
    return {
      target,
      input: {
        type: 'ScheduleDelivery',
        data: {
          deliveryId,
          webhookId: target.id,
          webhookAgentId: target.agentId,
          eventType: mapping.event,
          channel: d.channel,
          agentId: d.agentId,
          messageId: d.messageId,
          sourceEventId: e.id,
          sourceEventType: e.type,
          body,
        },
      },
      ctx: {
        accountId: e.metadata.accountId,
        correlationId: e.metadata.correlationId,
        causationId: e.id,
        requestId: e.metadata.requestId,
        actor: WEBHOOK_ACTOR,
      },
    };
  }
}

import { DomainError } from '../../domain/shared/errors.js';
import { streams } from '../../domain/shared/streams.js';
import { webhookDeliveryDecider, type WebhookDeliveryCommand, type WebhookDeliveryEvent } from '../../domain/webhook/webhook-delivery.decider.js';
import { webhookDecider, type WebhookCommand } from '../../domain/webhook/webhook.decider.js';
import { CONTEXT_LIMIT, TIMEOUT_SECONDS } from '../../domain/webhook/webhook.js';
import type { ClockPort } from '../ports/clock.port.js';
import type { EventStorePort } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { AgentQueries } from '../ports/queries.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import type { WebhookQueries, WebhookSecretsPort, WebhookSenderPort, WebhookUrlPolicyPort, WebhookView } from '../ports/webhook.port.js';
import { metadataOf, type RequestContext } from '../shared/context.js';
import { handleCommand } from '../shared/handle-command.js';
import { buildEnvelope, testMessageData } from './envelope.js';

export type ConfigureWebhookInput = Readonly<{ url: string; contextLimit?: number | null | undefined; timeout?: number | null | undefined }>;
export type WebhookTestResult = Readonly<{ success: boolean; httpStatus: number | null; errorMessage: string | null; responseTimeMs: number; deliveryId: string }>;

/**
 * Webhook configuration use cases (master and per agent) and the test send. Every write answers from the
 * read model once it has caught up.
 */
export class WebhookCommands {
  constructor(
    private readonly store: EventStorePort,
    private readonly ids: IdsPort,
    private readonly clock: ClockPort,
    private readonly readModels: ReadModelsPort,
    private readonly webhooks: WebhookQueries,
    private readonly agents: AgentQueries,
    private readonly secrets: WebhookSecretsPort,
    private readonly urlPolicy: WebhookUrlPolicyPort,
    private readonly sender: WebhookSenderPort,
    private readonly o: { defaultDeadlineMs: number },
  ) {}

  private async requireAgent(ctx: RequestContext, agentId: string): Promise<void> {
    if (!(await this.agents.get(ctx.accountId, agentId))) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
  }

  private async run(ctx: RequestContext, scopeKey: string, c: Omit<WebhookCommand, 'metadata'>) {
    const cmd = { ...c, metadata: { now: this.clock.now().toISOString(), accountId: ctx.accountId } } as WebhookCommand;
    const r = await handleCommand({ store: this.store, ids: this.ids }, webhookDecider, streams.webhook(scopeKey), cmd, metadataOf(ctx));
    if (r.checkpoint) await this.readModels.waitFor(r.checkpoint, r.events.map((e) => e.type));
    return r;
  }

  async getMaster(ctx: RequestContext): Promise<WebhookView | null> {
    return this.webhooks.master(ctx.accountId);
  }

  async getForAgent(ctx: RequestContext, agentId: string): Promise<WebhookView | null> {
    await this.requireAgent(ctx, agentId);
    return this.webhooks.ofAgent(ctx.accountId, agentId);
  }

  async configureMaster(ctx: RequestContext, input: ConfigureWebhookInput): Promise<WebhookView> {
    await this.configure(ctx, ctx.accountId, null, input);
    return this.required(await this.webhooks.master(ctx.accountId));
  }

  async configureForAgent(ctx: RequestContext, agentId: string, input: ConfigureWebhookInput): Promise<WebhookView> {
    await this.requireAgent(ctx, agentId);
    await this.configure(ctx, agentId, agentId, input);
    return this.required(await this.webhooks.ofAgent(ctx.accountId, agentId));
  }

  async deleteMaster(ctx: RequestContext): Promise<{ success: true; id: string }> {
    const r = await this.run(ctx, ctx.accountId, { type: 'DeleteWebhook', data: {} });
    return { success: true, id: deletedId(r.events) };
  }

  async deleteForAgent(ctx: RequestContext, agentId: string): Promise<{ success: true; id: string }> {
    await this.requireAgent(ctx, agentId);
    const r = await this.run(ctx, agentId, { type: 'DeleteWebhook', data: {} });
    return { success: true, id: deletedId(r.events) };
  }

  private async configure(ctx: RequestContext, scopeKey: string, agentId: string | null, input: ConfigureWebhookInput): Promise<void> {
    const refused = await this.urlPolicy.check(input.url);
    if (refused) throw new DomainError('VALIDATION_ERROR', `The webhook URL is not allowed: ${refused}`, [{ field: 'url', message: refused, type: 'value_error' }]);
    await this.run(ctx, scopeKey, {
      type: 'ConfigureWebhook',
      data: {
        webhookId: this.ids.id('whk'), agentId, url: input.url,
        contextLimit: input.contextLimit ?? CONTEXT_LIMIT.default, timeout: input.timeout ?? TIMEOUT_SECONDS.default,
        secret: this.secrets.seal(this.secrets.generate()),
      },
    });
  }

  private required(v: WebhookView | null): WebhookView {
    if (!v) throw new DomainError('WEBHOOK_NOT_FOUND', 'No webhook is configured');
    return v;
  }

  /** POST /v1/webhooks/test: the master webhook; `agentId` (or the account's first agent) shown in the payload. */
  async testMaster(ctx: RequestContext, agentId: string | null): Promise<WebhookTestResult> {
    let shown: string | null = agentId;
    if (agentId) await this.requireAgent(ctx, agentId);
    else shown = (await this.agents.list(ctx.accountId, { limit: 1, offset: 0 })).data[0]?.id ?? null;
    return this.test(ctx, this.required(await this.webhooks.master(ctx.accountId)), shown);
  }

  /** POST /v1/agents/{id}/webhook/test: the agent's own webhook. */
  async testForAgent(ctx: RequestContext, agentId: string): Promise<WebhookTestResult> {
    await this.requireAgent(ctx, agentId);
    return this.test(ctx, this.required(await this.webhooks.ofAgent(ctx.accountId, agentId)), agentId);
  }

  /**
   * Sends a fake `agent.message` through the same signing and sending path as real deliveries and waits for
   * the answer. It is recorded as a one-attempt delivery (shown in the delivery log, never retried, not
   * counted in the webhook's health).
   */
  private async test(ctx: RequestContext, webhook: WebhookView, agentId: string | null): Promise<WebhookTestResult> {
    const refused = await this.urlPolicy.check(webhook.url);
    const now = this.clock.now();
    const deliveryId = this.ids.id('whd');
    const messageId = this.ids.id('msg_test');
    const body = buildEnvelope({
      event: 'agent.message', channel: 'sms', timestamp: now.toISOString(), agentId, data: testMessageData({ agentId, now: now.toISOString(), messageId }),
      conversationState: null, recentHistory: [], contextLimit: webhook.contextLimit,
    });
    const result = refused
      ? { ok: false as const, httpStatus: null, errorMessage: `address not allowed: ${refused}`, responseBody: null, durationMs: 0, retryAfterS: null }
      : await this.sender.send({ url: webhook.url, secret: webhook.secret, webhookId: deliveryId, timestamp: Math.floor(now.getTime() / 1000), body, deadlineMs: this.o.defaultDeadlineMs });

    // decide both steps in memory, then append them together: a test delivery is never on the retry timeline
    const metadata = { now: now.toISOString(), accountId: ctx.accountId };
    const schedule: WebhookDeliveryCommand = {
      type: 'ScheduleDelivery',
      data: {
        deliveryId, webhookId: webhook.id, webhookAgentId: webhook.agentId, eventType: 'agent.message', channel: 'sms', agentId, messageId,
        sourceEventId: null, sourceEventType: 'WebhookTestRequested', body, maxAttempts: 1, test: true,
      },
      metadata,
    };
    const d = webhookDeliveryDecider;
    const first = d.decide(schedule, d.initialState());
    const recorded: WebhookDeliveryCommand = { type: 'RecordAttempt', data: { deliveryId, attempt: 1, result }, metadata: { ...metadata, now: this.clock.now().toISOString() } };
    const events: WebhookDeliveryEvent[] = [...first, ...d.decide(recorded, first.reduce(d.evolve, d.initialState()))];
    const meta = metadataOf(ctx);
    const r = await this.store.appendToStream(streams.webhookDelivery(deliveryId), events.map((e) => ({ ...e, id: this.ids.uuid(), metadata: meta })), { expectedRevision: 'no_stream' });
    await this.readModels.waitFor(r.checkpoint, events.map((e) => e.type));
    return {
      success: result.ok,
      httpStatus: result.httpStatus,
      errorMessage: result.ok ? null : result.errorMessage,
      responseTimeMs: Math.round(result.durationMs),
      deliveryId,
    };
  }
}

function deletedId(events: readonly { type: string; data: unknown }[]): string {
  const e = events.find((x) => x.type === 'WebhookDeleted');
  return e ? (e.data as { webhookId: string }).webhookId : '';
}

import { DomainError } from '../../domain/shared/errors.js';
import { type WebhookCommand, webhookDecider, webhookStream } from '../../domain/webhook/webhook.decider.js';
import { CONTEXT_LIMIT, DEFAULT_WEBHOOK_EVENTS, EVERY_WEBHOOK_EVENT, TIMEOUT_SECONDS } from '../../domain/webhook/webhook.js';
import { webhookDeliveryDecider, webhookDeliveryStream } from '../../domain/webhook/webhook-delivery.decider.js';
import type { AgentQueries } from '../agents/agent-queries.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import { awaitOutcome } from '../shared/await-outcome.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import { buildEnvelope, testMessageData } from './envelope.js';
import type { WebhookQueries, WebhookSecretsPort, WebhookUrlPolicyPort, WebhookView } from './webhook.port.js';

export type ConfigureWebhookInput = Readonly<{
  url: string;
  contextLimit?: number | null | undefined;
  timeout?: number | null | undefined;
  /** public event names to receive; `["*"]` for all; omitted: the public kinds (a configure replaces every setting) */
  events?: readonly string[] | null | undefined;
}>;
export type WebhookTestResult = Readonly<{
  success: boolean;
  httpStatus: number | null;
  errorMessage: string | null;
  responseTimeMs: number;
  deliveryId: string;
}>;

/**
 * Webhook configuration use cases (master and per agent) and the test send. Every write answers from the
 * read model once it has caught up.
 */
export class WebhookCommands {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly webhooks: WebhookQueries,
    private readonly agents: AgentQueries,
    private readonly secrets: WebhookSecretsPort,
    private readonly urlPolicy: WebhookUrlPolicyPort,
    private readonly o: {
      defaultDeadlineMs: number;
      /** the public event names some capability delivers (from the webhook mappings), besides the public kinds */
      knownEvents?: readonly string[];
    },
  ) {}

  /** The list to record: the default when omitted, duplicates dropped; an unknown name is a 422 naming it. */
  private eventsOf(input: ConfigureWebhookInput): readonly string[] {
    if (input.events === undefined || input.events === null) return [...DEFAULT_WEBHOOK_EVENTS];
    const known = new Set([EVERY_WEBHOOK_EVENT, ...DEFAULT_WEBHOOK_EVENTS, ...(this.o.knownEvents ?? [])]);
    const errors = input.events.flatMap((name, i) =>
      known.has(name)
        ? []
        : [
            {
              field: `events.${i}`,
              message: `unknown event ${JSON.stringify(name)}; known: ${[...known].join(', ')}`,
              type: 'value_error',
            },
          ],
    );
    if (errors.length) throw new DomainError('VALIDATION_ERROR', 'Unknown webhook event name', errors);
    return [...new Set(input.events)];
  }

  private async requireAgent(ctx: RequestContext, agentId: string): Promise<void> {
    if (!(await this.agents.get(ctx.accountId, agentId))) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
  }

  private run(ctx: RequestContext, scopeKey: string, cmd: CommandInput<WebhookCommand>) {
    return this.exec.execute(webhookDecider, webhookStream(scopeKey), cmd, ctx, { readYourWrites: true });
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
    const events = this.eventsOf(input);
    const refused = await this.urlPolicy.check(input.url);
    if (refused)
      throw new DomainError('VALIDATION_ERROR', `The webhook URL is not allowed: ${refused}`, [
        { field: 'url', message: refused, type: 'value_error' },
      ]);
    await this.run(ctx, scopeKey, {
      type: 'ConfigureWebhook',
      data: {
        webhookId: this.ids.id('whk'),
        agentId,
        url: input.url,
        contextLimit: input.contextLimit ?? CONTEXT_LIMIT.default,
        timeout: input.timeout ?? TIMEOUT_SECONDS.default,
        secret: this.secrets.seal(this.secrets.generate()),
        events,
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
   * Records a fake `agent.message` as a one-attempt test delivery and awaits what the test-send process
   * (WebhookTestSend) got from the endpoint: the same signing and sending path as real deliveries. The delivery
   * shows in the delivery log, is never retried and does not count in the webhook's health.
   */
  private async test(ctx: RequestContext, webhook: WebhookView, agentId: string | null): Promise<WebhookTestResult> {
    const now = this.exec.now();
    const deliveryId = this.ids.id('whd');
    const messageId = this.ids.id('msg_test');
    const body = buildEnvelope({
      event: 'agent.message',
      channel: 'sms',
      timestamp: now,
      agentId,
      data: testMessageData({ agentId, now, messageId }),
      conversationState: null,
      recentHistory: [],
      contextLimit: webhook.contextLimit,
    });
    const stream = webhookDeliveryStream(deliveryId);
    await this.exec.execute(
      webhookDeliveryDecider,
      stream,
      {
        type: 'ScheduleDelivery',
        data: {
          deliveryId,
          webhookId: webhook.id,
          webhookAgentId: webhook.agentId,
          eventType: 'agent.message',
          channel: 'sms',
          agentId,
          messageId,
          sourceEventId: null,
          sourceEventType: 'WebhookTestRequested',
          body,
          maxAttempts: 1,
          test: true,
        },
      },
      ctx,
    );
    // the endpoint has the deadline to answer; the margin covers the process picking the delivery up
    const outcome = await awaitOutcome(
      this.exec,
      webhookDeliveryDecider,
      stream,
      (s) => s.status === 'succeeded' || s.status === 'failed',
      this.o.defaultDeadlineMs + 10_000,
    );
    if (outcome.timedOut) {
      throw new DomainError(
        'READ_MODEL_TIMEOUT',
        `The test delivery ${deliveryId} was recorded but no worker has sent it yet; it shows in GET /v1/webhooks/deliveries once sent`,
      );
    }
    await this.exec.settle(outcome.events);
    const attempt = outcome.events.find((e) => e.type === 'WebhookAttemptSucceeded' || e.type === 'WebhookAttemptFailed');
    const d = attempt?.type === 'WebhookAttemptSucceeded' || attempt?.type === 'WebhookAttemptFailed' ? attempt.data : null;
    return {
      success: attempt?.type === 'WebhookAttemptSucceeded',
      httpStatus: d?.httpStatus ?? null,
      errorMessage:
        attempt?.type === 'WebhookAttemptFailed' ? attempt.data.errorMessage : attempt ? null : 'webhook deleted before delivery',
      responseTimeMs: Math.round(d?.durationMs ?? 0),
      deliveryId,
    };
  }
}

function deletedId(events: readonly { type: string; data: unknown }[]): string {
  const e = events.find((x) => x.type === 'WebhookDeleted');
  return e ? (e.data as { webhookId: string }).webhookId : '';
}

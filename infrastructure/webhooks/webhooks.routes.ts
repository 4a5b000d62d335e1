import type { AgentQueries } from '../../application/agents/agent-queries.port.js';
import type { ClockPort } from '../../application/ports/clock.port.js';
import type { DeliveryReplay } from '../../application/webhooks/delivery-replay.js';
import type { WebhookQueries } from '../../application/webhooks/webhook.port.js';
import type { WebhookCommands } from '../../application/webhooks/webhook-commands.js';
import { DomainError } from '../../domain/shared/errors.js';
import { AgentIdParams } from '../agents/agent.schemas.js';
import type { Api } from '../http/api.js';
import { deliveryCompat, testResultCompat } from '../http/compat.js';
import { z } from '../http/openapi.js';
import {
  AgentDeliveriesQuery,
  AllTimeStatsResponse,
  DeleteWebhookResponse,
  DeliveriesQuery,
  DeliveryIdParams,
  MaybeWebhookResponse,
  NoticesQuery,
  NoticesResponse,
  PaginatedDeliveriesResponse,
  RecoverRequest,
  RecoverResponse,
  StatsQuery,
  WebhookCreateRequest,
  WebhookDeliveryResponse,
  WebhookDeliveryStatsResponse,
  WebhookResponse,
  WebhookTestQuery,
  WebhookTestResponse,
} from './webhook.schemas.js';

const HOUR_MS = 3_600_000;

export function webhookRoutes(
  api: Api,
  deps: { commands: WebhookCommands; replay: DeliveryReplay; queries: WebhookQueries; agents: AgentQueries; clock: ClockPort },
): void {
  const tag = 'webhooks';
  const agentTag = 'agent-webhooks';
  const since = (hours: number) => new Date(deps.clock.now().getTime() - hours * HOUR_MS).toISOString();
  const requireAgent = async (accountId: string, agentId: string) => {
    if (!(await deps.agents.get(accountId, agentId))) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
  };

  api.route({
    method: 'get',
    path: '/v1/webhooks',
    tag,
    summary: "The account's master webhook, or null",
    response: MaybeWebhookResponse,
    handler: ({ ctx }) => deps.commands.getMaster(ctx),
  });
  api.route({
    method: 'post',
    path: '/v1/webhooks',
    tag,
    summary: 'Create or update the master webhook (a new secret every time)',
    body: WebhookCreateRequest,
    response: WebhookResponse,
    handler: ({ body, ctx }) => deps.commands.configureMaster(ctx, body),
  });
  api.route({
    method: 'delete',
    path: '/v1/webhooks',
    tag,
    summary: 'Remove the master webhook',
    response: DeleteWebhookResponse,
    errors: [404],
    handler: ({ ctx }) => deps.commands.deleteMaster(ctx),
  });

  api.route({
    method: 'get',
    path: '/v1/webhooks/deliveries',
    tag,
    summary: 'Deliveries of all the account webhooks, newest first, with every attempt',
    query: DeliveriesQuery,
    response: PaginatedDeliveriesResponse,
    handler: async ({ query, ctx }) => {
      const [r, notices] = await Promise.all([
        deps.queries.deliveries(ctx.accountId, {
          limit: query.limit,
          offset: query.offset,
          since: query.hours ? since(query.hours) : null,
        }),
        deps.queries.notices(ctx.accountId, 10),
      ]);
      const items = r.items.map(deliveryCompat);
      return { items, total: r.total, offset: query.offset, limit: query.limit, data: items, notices };
    },
  });
  api.route({
    method: 'get',
    path: '/v1/webhooks/notices',
    tag,
    summary: "Notices about the account's webhooks: warnings before one is disabled, disables, recoveries (newest first)",
    query: NoticesQuery,
    response: NoticesResponse,
    handler: async ({ query, ctx }) => ({ data: await deps.queries.notices(ctx.accountId, query.limit) }),
  });
  api.route({
    method: 'post',
    path: '/v1/webhooks/deliveries/recover',
    tag,
    summary: 'Send again every delivery that ended failed since a date-time (at most 500 per request)',
    body: RecoverRequest,
    response: RecoverResponse,
    status: 202,
    handler: ({ body, ctx }) => deps.replay.recover(ctx, new Date(body.since).toISOString()),
  });
  api.route({
    method: 'post',
    path: '/v1/webhooks/deliveries/:delivery_id/retry',
    tag,
    summary: 'Send a finished delivery again, as a new attempt with the same X-Webhook-ID',
    params: DeliveryIdParams,
    response: WebhookDeliveryResponse,
    status: 202,
    errors: [404, 409],
    handler: async ({ params, ctx }) => deliveryCompat(await deps.replay.retry(ctx, params.delivery_id)),
  });
  api.route({
    method: 'get',
    path: '/v1/webhooks/deliveries/stats',
    tag,
    summary: 'Delivery counts over the last N hours (default 24)',
    query: StatsQuery,
    response: WebhookDeliveryStatsResponse,
    handler: ({ query, ctx }) => deps.queries.stats(ctx.accountId, since(query.hours), deps.clock.now().toISOString()),
  });
  api.route({
    method: 'get',
    path: '/v1/webhooks/deliveries/all-time',
    tag,
    summary: 'Delivery counts over all time',
    response: AllTimeStatsResponse,
    handler: ({ ctx }) => deps.queries.allTime(ctx.accountId),
  });
  api.route({
    method: 'post',
    path: '/v1/webhooks/test',
    tag,
    summary: 'Send a fake agent.message to the master webhook and report the answer',
    query: WebhookTestQuery,
    response: WebhookTestResponse,
    errors: [404],
    handler: async ({ query, ctx }) => testResultCompat(await deps.commands.testMaster(ctx, query.agentId ?? null)),
  });

  api.route({
    method: 'get',
    path: '/v1/agents/:agent_id/webhook',
    tag: agentTag,
    summary: "The agent's own webhook, or null",
    params: AgentIdParams,
    response: MaybeWebhookResponse,
    errors: [404],
    handler: ({ params, ctx }) => deps.commands.getForAgent(ctx, params.agent_id),
  });
  api.route({
    method: 'post',
    path: '/v1/agents/:agent_id/webhook',
    tag: agentTag,
    summary: "Create or update the agent's own webhook; it replaces the master for this agent's events",
    params: AgentIdParams,
    body: WebhookCreateRequest,
    response: WebhookResponse,
    errors: [404],
    handler: ({ params, body, ctx }) => deps.commands.configureForAgent(ctx, params.agent_id, body),
  });
  api.route({
    method: 'delete',
    path: '/v1/agents/:agent_id/webhook',
    tag: agentTag,
    summary: "Remove the agent's own webhook (its events go to the master again)",
    params: AgentIdParams,
    response: DeleteWebhookResponse,
    errors: [404],
    handler: ({ params, ctx }) => deps.commands.deleteForAgent(ctx, params.agent_id),
  });
  api.route({
    method: 'get',
    path: '/v1/agents/:agent_id/webhook/deliveries',
    tag: agentTag,
    summary: "Recent deliveries to the agent's own webhook",
    params: AgentIdParams,
    query: AgentDeliveriesQuery,
    response: z.array(WebhookDeliveryResponse),
    errors: [404],
    handler: async ({ params, query, ctx }) => {
      await requireAgent(ctx.accountId, params.agent_id);
      return (await deps.queries.agentDeliveries(ctx.accountId, params.agent_id, query.limit)).map(deliveryCompat);
    },
  });
  api.route({
    method: 'post',
    path: '/v1/agents/:agent_id/webhook/test',
    tag: agentTag,
    summary: "Send a fake agent.message to the agent's own webhook and report the answer",
    params: AgentIdParams,
    response: WebhookTestResponse,
    errors: [404],
    handler: async ({ params, ctx }) => testResultCompat(await deps.commands.testForAgent(ctx, params.agent_id)),
  });
}

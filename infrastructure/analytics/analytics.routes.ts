import type { UsageAnalytics } from '../../application/analytics/usage-analytics.js';
import type { Api } from '../http/api.js';
import {
  AgentUsageResponse,
  ByAgentQuery,
  CallAnalyticsResponse,
  DailyQuery,
  DailyUsageResponse,
  DaysQuery,
  MessageDeliveryResponse,
  MonthlyQuery,
  MonthlyUsageResponse,
  NumberUsageResponse,
  WebhookAnalyticsResponse,
} from './analytics.schemas.js';

/** Usage breakdowns and delivery analytics (docs/analytics.md), all by the one counting rule. */
export function analyticsRoutes(api: Api, deps: { usage: UsageAnalytics }): void {
  api.route({
    method: 'get',
    path: '/v1/usage/daily',
    tag: 'usage',
    summary: 'Usage per UTC day over the last N days (1-365, default 30): messages, calls, webhook deliveries, lookups, money',
    query: DailyQuery,
    response: DailyUsageResponse,
    handler: ({ query, ctx }) => deps.usage.daily(ctx.accountId, query.days),
  });
  api.route({
    method: 'get',
    path: '/v1/usage/monthly',
    tag: 'usage',
    summary: 'Usage per calendar month (UTC) over the last N months (1-36, default 6)',
    query: MonthlyQuery,
    response: MonthlyUsageResponse,
    handler: ({ query, ctx }) => deps.usage.monthly(ctx.accountId, query.months),
  });
  api.route({
    method: 'get',
    path: '/v1/usage/by-number',
    tag: 'usage',
    summary: 'Usage per phone number over all time, with the agent each is attached to',
    response: NumberUsageResponse,
    handler: ({ ctx }) => deps.usage.byNumber(ctx.accountId),
  });
  api.route({
    method: 'get',
    path: '/v1/usage/by-agent',
    tag: 'usage',
    summary: 'Usage per agent in the current week, month or year (messages, completed calls, call seconds); no agent: "Unassigned"',
    query: ByAgentQuery,
    response: AgentUsageResponse,
    handler: ({ query, ctx }) => deps.usage.byAgent(ctx.accountId, query.period, query.tz ?? null),
  });
  api.route({
    method: 'get',
    path: '/v1/analytics/messages',
    tag: 'analytics',
    summary: 'Delivery rate and failures by category of sent texts, per number and day',
    query: DaysQuery,
    response: MessageDeliveryResponse,
    handler: ({ query, ctx }) => deps.usage.messageDelivery(ctx.accountId, query.days),
  });
  api.route({
    method: 'get',
    path: '/v1/analytics/webhooks',
    tag: 'analytics',
    summary: 'Success rate and attempt latency percentiles per webhook endpoint',
    query: DaysQuery,
    response: WebhookAnalyticsResponse,
    handler: ({ query, ctx }) => deps.usage.webhooks(ctx.accountId, query.days),
  });
  api.route({
    method: 'get',
    path: '/v1/analytics/calls',
    tag: 'analytics',
    summary: 'Call outcomes and agent-turn latency percentiles per agent',
    query: DaysQuery,
    response: CallAnalyticsResponse,
    handler: ({ query, ctx }) => deps.usage.calls(ctx.accountId, query.days),
  });
}

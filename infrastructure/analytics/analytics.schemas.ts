import { isTimeZone } from '../../application/analytics/periods.js';
import { z } from '../http/openapi.js';
import { queryInt } from '../http/pagination.js';

/** The extra counts every usage point carries beside the public `messages`, `calls` and `webhooks` (docs/analytics.md). */
const counts = {
  messages: z.number().int().openapi({ description: 'texts on channels that draw on credit (SMS, MMS), sent and received' }),
  calls: z.number().int().openapi({ description: 'calls that connected (ended completed)' }),
  webhooks: z.number().int().openapi({ description: 'webhook deliveries, test sends left out' }),
  messagesSent: z.number().int(),
  messagesReceived: z.number().int(),
  segments: z.number().int().openapi({ description: 'SMS segments of those texts' }),
  callSeconds: z.number().int().openapi({ description: 'seconds of those calls, answer to end' }),
  voiceMinutes: z.number().openapi({ description: 'callSeconds in minutes, one decimal' }),
  webhooksSucceeded: z.number().int(),
  webhooksFailed: z.number().int(),
  lookups: z.number().int().openapi({ description: 'numbers looked up (and charged)' }),
  spentMicros: z.number().int().openapi({ description: "money charged to this account, micro-dollars (a sub-account's is its parent's)" }),
};

export const DailyQuery = z.object({
  days: queryInt({ min: 1, max: 365, def: 30 }).openapi({ description: 'the last N days, today (UTC) included, 1-365' }),
});
export const DailyUsageResponse = z
  .object({
    data: z.array(z.object({ date: z.string().openapi({ description: 'YYYY-MM-DD (UTC)' }), ...counts }).openapi('DailyUsagePoint')),
    days: z.number().int(),
  })
  .openapi('DailyUsageResponse');

export const MonthlyQuery = z.object({
  months: queryInt({ min: 1, max: 36, def: 6 }).openapi({ description: 'the last N calendar months (UTC), this one included, 1-36' }),
});
export const MonthlyUsageResponse = z
  .object({
    data: z.array(z.object({ month: z.string().openapi({ description: 'YYYY-MM (UTC)' }), ...counts }).openapi('MonthlyUsagePoint')),
    months: z.number().int(),
  })
  .openapi('MonthlyUsageResponse');

export const NumberUsageResponse = z
  .object({
    data: z.array(
      z
        .object({
          numberId: z.string(),
          phoneNumber: z.string(),
          country: z.string(),
          status: z.string(),
          agentId: z.string().nullable(),
          agentName: z.string().nullable(),
          messages: z.number().int(),
          calls: z.number().int(),
          messagesSent: z.number().int(),
          messagesReceived: z.number().int(),
          callSeconds: z.number().int(),
        })
        .openapi('NumberUsageItem'),
    ),
  })
  .openapi('NumberUsageResponse');

export const ByAgentQuery = z.object({
  period: z.enum(['week', 'month', 'year']).openapi({ description: 'the current calendar week (from Monday), month or year' }),
  tz: z
    .string()
    .max(64)
    .refine(isTimeZone, { message: 'must be an IANA time zone, e.g. America/New_York' })
    .optional()
    .openapi({ description: 'IANA time zone of the period, e.g. America/New_York; default UTC' }),
});
export const AgentUsageResponse = z
  .object({
    data: z.array(
      z
        .object({
          agentId: z.string().nullable().openapi({ description: 'null for the Unassigned bucket' }),
          agentName: z.string(),
          messages: z.number().int(),
          calls: z.number().int().openapi({ description: 'completed calls' }),
          totalSeconds: z.number().int(),
          isOrphan: z.boolean().openapi({ description: 'the agent has been deleted since' }),
        })
        .openapi('AgentUsageItem'),
    ),
    period: z.string(),
    periodStart: z.string(),
    periodEnd: z.string(),
    tz: z.string(),
  })
  .openapi('AgentUsageResponse');

export const DaysQuery = z.object({
  days: queryInt({ min: 1, max: 365, def: 30 }).openapi({ description: 'the last N days, today (UTC) included, 1-365' }),
});

const Percentiles = z
  .object({ p50: z.number().nullable(), p90: z.number().nullable(), p99: z.number().nullable(), max: z.number().nullable() })
  .openapi('LatencyPercentiles');
const Window = { days: z.number().int(), from: z.string(), to: z.string().openapi({ description: 'the last day, inclusive' }) };

export const MessageDeliveryResponse = z
  .object({
    ...Window,
    data: z.array(
      z
        .object({
          date: z.string(),
          numberId: z.string(),
          phoneNumber: z.string().nullable(),
          sent: z.number().int(),
          delivered: z.number().int(),
          failed: z.number().int(),
          pending: z.number().int(),
          deliveryRate: z
            .number()
            .nullable()
            .openapi({ description: 'delivered ÷ (delivered + failed), percent; null when none finished' }),
          failuresByCategory: z.record(z.string(), z.number().int()),
        })
        .openapi('MessageDeliveryPoint'),
    ),
  })
  .openapi('MessageDeliveryAnalytics');

export const WebhookAnalyticsResponse = z
  .object({
    ...Window,
    data: z.array(
      z
        .object({
          webhookId: z.string(),
          url: z.string().nullable(),
          agentId: z.string().nullable(),
          status: z.string().nullable(),
          deliveries: z.number().int(),
          succeeded: z.number().int(),
          failed: z.number().int(),
          pending: z.number().int(),
          successRate: z.number().nullable().openapi({ description: 'succeeded ÷ finished deliveries, percent; null when none finished' }),
          attempts: z.number().int(),
          failedAttempts: z.number().int(),
          attemptLatencyMs: Percentiles,
        })
        .openapi('WebhookEndpointAnalytics'),
    ),
  })
  .openapi('WebhookAnalytics');

export const CallAnalyticsResponse = z
  .object({
    ...Window,
    data: z.array(
      z
        .object({
          agentId: z.string().nullable(),
          agentName: z.string(),
          isOrphan: z.boolean(),
          placed: z.number().int().openapi({ description: 'every call, whatever its outcome' }),
          completed: z.number().int(),
          failed: z.number().int(),
          inProgress: z.number().int(),
          callSeconds: z.number().int(),
          outcomes: z.record(z.string(), z.number().int()).openapi({ description: 'calls by disconnectionReason' }),
          turns: z.number().int().openapi({ description: 'agent turns with a measured latency' }),
          turnLatencyMs: z.object({ total: Percentiles, requestMs: Percentiles, firstByteMs: Percentiles, speechStartMs: Percentiles }),
        })
        .openapi('CallAgentAnalytics'),
    ),
  })
  .openapi('CallAnalytics');

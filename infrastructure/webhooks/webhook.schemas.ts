import {
  CONTEXT_LIMIT,
  DEFAULT_WEBHOOK_EVENTS,
  MAX_WEBHOOK_EVENTS,
  TIMEOUT_SECONDS,
  WEBHOOK_STATUSES,
} from '../../domain/webhook/webhook.js';
import { z } from '../http/openapi.js';
import { queryInt } from '../http/pagination.js';

const optionalQueryInt = (min: number, max: number) =>
  z.preprocess(
    (v) => (v === undefined || v === '' ? undefined : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v),
    z.number().int().min(min).max(max).optional(),
  );

export const WebhookCreateRequest = z
  .object({
    url: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).max(2048),
    contextLimit: z
      .number()
      .int()
      .min(CONTEXT_LIMIT.min)
      .max(CONTEXT_LIMIT.max)
      .nullish()
      .openapi({
        description: `recent messages included in payloads, ${CONTEXT_LIMIT.min}-${CONTEXT_LIMIT.max}, default ${CONTEXT_LIMIT.default}; 0 disables history`,
      }),
    timeout: z
      .number()
      .int()
      .min(TIMEOUT_SECONDS.min)
      .max(TIMEOUT_SECONDS.max)
      .nullish()
      .openapi({
        description: `seconds a voice webhook has to answer, ${TIMEOUT_SECONDS.min}-${TIMEOUT_SECONDS.max}, default ${TIMEOUT_SECONDS.default}`,
      }),
    events: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(MAX_WEBHOOK_EVENTS)
      .nullish()
      .openapi({
        description: `public event names to receive, default ${DEFAULT_WEBHOOK_EVENTS.join(', ')}; lifecycle events (agent.created, number.provisioned, …) only when listed; ["*"] for every event. Each configure replaces the list`,
      }),
  })
  .openapi('WebhookCreateRequest');

export const WebhookResponse = z
  .object({
    id: z.string(),
    url: z.string(),
    secret: z.string().openapi({ description: 'signing secret; a new one on every create-or-update' }),
    status: z.enum(WEBHOOK_STATUSES).openapi({
      description:
        'active; failing (the last delivery exhausted its retries); disabled (5 exhausted deliveries in a row; configure again to re-enable)',
    }),
    contextLimit: z.number().int(),
    timeout: z.number().int(),
    events: z.array(z.string()).openapi({ description: 'public event names it receives; ["*"]: every event' }),
    createdAt: z.string(),
    updatedAt: z.string(),
    agentId: z.string().nullable().openapi({ description: 'the agent of an agent webhook; null for the account master webhook' }),
  })
  .openapi('WebhookResponse');

export const MaybeWebhookResponse = WebhookResponse.nullable();

export const DeleteWebhookResponse = z.object({ success: z.boolean(), id: z.string() }).openapi('DeleteWebhookResponse');

export const DeliveryAttempt = z
  .object({
    attempt: z.number().int(),
    status: z.enum(['success', 'failed']),
    httpStatus: z.number().int().nullable(),
    errorMessage: z.string().nullable(),
    responseBody: z.string().nullable(),
    responseTimeMs: z.number().int(),
    attemptedAt: z.string(),
    nextRetryAt: z.string().nullable(),
  })
  .openapi('WebhookDeliveryAttempt');

export const WebhookDeliveryResponse = z
  .object({
    id: z.string(),
    messageId: z.string().nullable(),
    eventType: z.string().nullable(),
    channel: z.string().nullable(),
    status: z.enum(['pending', 'success', 'failed']),
    httpStatus: z.number().int().nullable(),
    errorMessage: z.string().nullable(),
    responseBody: z.string().nullable(),
    attemptCount: z.number().int(),
    lastAttemptAt: z.string().nullable(),
    nextRetryAt: z.string().nullable(),
    createdAt: z.string(),
    webhookId: z.string(),
    agentId: z.string().nullable(),
    test: z.boolean().openapi({ description: 'a test send: listed in the log, never counted in statistics or usage' }),
    attempts: z.array(DeliveryAttempt),
    // the names the public MCP server reads, derived from the fields above (docs/compatibility.md)
    event: z.string().nullable().openapi({ description: 'same as eventType' }),
    success: z.boolean().openapi({ description: 'status is `success`' }),
    statusCode: z.number().int().nullable().openapi({ description: 'same as httpStatus' }),
    responseMs: z.number().int().nullable().openapi({ description: "the last attempt's response time; null before the first attempt" }),
    deliveredAt: z.string().nullable().openapi({ description: 'when the successful attempt was made; null while not delivered' }),
  })
  .openapi('WebhookDeliveryResponse');

export const WebhookNotice = z
  .object({
    id: z.string(),
    kind: z.enum(['disable_warning', 'disabled', 'recovered']),
    webhookId: z.string(),
    agentId: z.string().nullable(),
    url: z.string().nullable(),
    consecutiveFailures: z.number().int().nullable(),
    message: z.string(),
    email: z
      .object({ status: z.enum(['pending', 'sent', 'no_address']), to: z.string().nullable() })
      .nullable()
      .openapi({ description: "a warning's e-mail to the account: pending, sent (to), or no_address" }),
    at: z.string(),
  })
  .openapi('WebhookNotice');

export const PaginatedDeliveriesResponse = z
  .object({
    items: z.array(WebhookDeliveryResponse),
    total: z.number().int(),
    offset: z.number().int(),
    limit: z.number().int(),
    data: z.array(WebhookDeliveryResponse).openapi({ description: 'the same list as items, for clients that read `data`' }),
    notices: z.array(WebhookNotice).openapi({
      description:
        "the latest notices about the account's webhooks (a warning before one is disabled, a disable, a recovery), newest first",
    }),
  })
  .openapi('PaginatedDeliveriesResponse');

export const NoticesQuery = z.object({ limit: queryInt({ min: 1, max: 100, def: 20 }) });
export const NoticesResponse = z.object({ data: z.array(WebhookNotice) }).openapi('WebhookNoticesResponse');

export const DeliveryIdParams = z.object({ delivery_id: z.string().min(1).max(128) });

export const RecoverRequest = z
  .object({
    since: z.iso
      .datetime({ offset: true })
      .openapi({ description: 'send again every delivery that ended failed at or after this date-time (test sends left out)' }),
  })
  .openapi('RecoverDeliveriesRequest');

export const RecoverResponse = z
  .object({
    since: z.string(),
    queued: z.number().int().openapi({ description: 'deliveries sent again as a new attempt each' }),
    skipped: z
      .number()
      .int()
      .openapi({ description: 'failed deliveries whose webhook is deleted or disabled, or that were already sent again' }),
    hasMore: z.boolean().openapi({ description: 'more failed deliveries remain beyond this request (at most 500 each): ask again' }),
    deliveryIds: z.array(z.string()),
  })
  .openapi('RecoverDeliveriesResponse');

export const DeliveriesQuery = z.object({
  limit: queryInt({ min: 1, max: 100, def: 50 }),
  offset: queryInt({ min: 0, def: 0 }),
  hours: optionalQueryInt(1, 168).openapi({ description: 'only deliveries created in the last N hours (1-168)' }),
});

export const AgentDeliveriesQuery = z.object({ limit: queryInt({ min: 1, max: 100, def: 50 }) });

export const StatsQuery = z.object({ hours: queryInt({ min: 1, max: 168, def: 24 }) });

const Counts = { total: z.number().int(), success: z.number().int(), failed: z.number().int(), pending: z.number().int() };

export const WebhookDeliveryStatsResponse = z
  .object({
    ...Counts,
    successRate: z.number().openapi({ description: 'delivered share of the deliveries in the window, percent (0-100, one decimal)' }),
    byEventType: z.record(z.string(), z.object(Counts)),
    byHour: z.array(z.object({ hour: z.string(), ...Counts }).openapi('WebhookDeliveryStatsResponseByHourItems')),
  })
  .openapi('WebhookDeliveryStatsResponse');

export const AllTimeStatsResponse = z
  .object({
    total: z.number().int(),
    success: z.number().int(),
    failed: z.number().int(),
    successRate: z.number(),
  })
  .openapi('AllTimeStatsResponse');

export const WebhookTestQuery = z.object({ agentId: z.string().min(1).max(64).optional() });

export const WebhookTestResponse = z
  .object({
    success: z.boolean(),
    httpStatus: z.number().int().nullable(),
    errorMessage: z.string().nullable(),
    responseTimeMs: z.number().int(),
    deliveryId: z.string(),
    // the same values under the names the public MCP server reads (docs/compatibility.md)
    statusCode: z.number().int().nullable().openapi({ description: 'same as httpStatus' }),
    responseMs: z.number().int().openapi({ description: 'same as responseTimeMs' }),
    error: z.string().nullable().openapi({ description: 'same as errorMessage' }),
  })
  .openapi('WebhookTestResponse');

import { DomainError } from '../shared/errors.js';
import { storableOrNull } from '../shared/storable-text.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import { addSeconds, MAX_ATTEMPTS, nextDelayS } from './retry-policy.js';

/** The stream of one webhook delivery and its attempts: `<category>-<id>` (docs/event-store.md#aggregates-and-events). */
export const webhookDeliveryStream = (id: string) => `webhook_delivery-${id}`;

/**
 * One webhook delivery: one domain event sent to one webhook, with its attempt log (docs/webhooks.md#retry-schedule). Stream
 * `webhook_delivery-<deliveryId>`; the id derives from the source event's id, so scheduling is idempotent.
 * The payload is stored as the exact JSON text sent, so every retry sends the same bytes.
 */
export type DeliveryTarget = Readonly<{
  webhookId: string;
  /** the agent whose own webhook this is; null for the account's master webhook */
  webhookAgentId: string | null;
}>;

export type DeliveryDescription = Readonly<{
  /** public event name, e.g. `agent.message` */
  eventType: string;
  channel: string | null;
  /** the agent the event is about */
  agentId: string | null;
  /** the message (or call, or other record) the event is about, when there is one */
  messageId: string | null;
  sourceEventId: string | null;
  sourceEventType: string;
  /** the JSON body, exactly as sent */
  body: string;
}>;

/** What one HTTP attempt produced. */
export type AttemptResult =
  | Readonly<{ ok: true; httpStatus: number; responseBody: string | null; durationMs: number }>
  | Readonly<{
      ok: false;
      httpStatus: number | null;
      errorMessage: string;
      responseBody: string | null;
      durationMs: number;
      retryAfterS: number | null;
    }>;

export type AbandonReason = 'webhook_deleted' | 'webhook_disabled';
/**
 * Why a delivery ended failed: its scheduled attempts ran out (`exhausted`, which counts towards the webhook's
 * status), its webhook went away, or a manual retry's one attempt failed (`retry_failed`, which does not count
 * again: the delivery was counted when its schedule ran out).
 */
export type FailureReason = 'exhausted' | 'retry_failed' | AbandonReason;
/** Who asked for a delivery to be sent again (docs/webhooks.md#sending-a-delivery-again). */
export type RetrySource = 'retry' | 'recover';

/**
 * The first attempt taken at scheduling by the worker of the process that scheduled it, under the same lease a claim
 * gives (docs/webhooks.md#the-first-attempt-handed-over): the timeline row is put already claimed, so no other worker
 * sends it while that one does.
 */
export type FirstAttemptClaim = Readonly<{ by: string; until: string }>;

export type WebhookDeliveryCommand =
  | Command<
      'ScheduleDelivery',
      { deliveryId: string; maxAttempts?: number; test?: boolean; firstAttemptClaim?: FirstAttemptClaim } & DeliveryTarget &
        DeliveryDescription
    >
  | Command<'RecordAttempt', { deliveryId: string; attempt: number; result: AttemptResult }>
  /** The webhook went away (deleted or disabled) before the delivery finished: stop without sending. */
  | Command<'AbandonDelivery', { deliveryId: string; reason: AbandonReason }>
  /** Send a finished delivery once more, as a new attempt with the same id (docs/webhooks.md#sending-a-delivery-again). */
  | Command<'RetryDelivery', { deliveryId: string; source: RetrySource }>;

export type WebhookDeliveryEvent =
  | Event<
      'WebhookDeliveryScheduled',
      {
        deliveryId: string;
        accountId: string;
        maxAttempts: number;
        test: boolean;
        scheduledAt: string;
        firstAttemptAt: string;
        /** absent when the first attempt was left on the timeline for any worker to claim */
        firstAttemptClaim?: FirstAttemptClaim;
      } & DeliveryTarget &
        DeliveryDescription
    >
  | Event<
      'WebhookAttemptSucceeded',
      {
        deliveryId: string;
        accountId: string;
        attempt: number;
        httpStatus: number;
        responseBody: string | null;
        durationMs: number;
        attemptedAt: string;
      }
    >
  | Event<
      'WebhookAttemptFailed',
      {
        deliveryId: string;
        accountId: string;
        attempt: number;
        httpStatus: number | null;
        errorMessage: string;
        responseBody: string | null;
        durationMs: number;
        attemptedAt: string;
        nextAttemptAt: string | null;
      }
    >
  | Event<
      'WebhookDeliverySucceeded',
      { deliveryId: string; accountId: string; attempts: number; test: boolean; deliveredAt: string } & DeliveryTarget
    >
  | Event<
      'WebhookDeliveryFailed',
      {
        deliveryId: string;
        accountId: string;
        attempts: number;
        test: boolean;
        reason: FailureReason;
        failedAt: string;
      } & DeliveryTarget
    >
  /** A finished delivery is to be sent once more: one more attempt, due at once, with the same delivery id. */
  | Event<
      'WebhookDeliveryRetryRequested',
      {
        deliveryId: string;
        accountId: string;
        /** the number of the attempt this adds */
        attempt: number;
        /** how the delivery had ended before */
        previousStatus: 'succeeded' | 'failed';
        source: RetrySource;
        test: boolean;
        requestedAt: string;
      } & DeliveryTarget
    >;

export const webhookDeliveryEventTypes = [
  'WebhookDeliveryScheduled',
  'WebhookAttemptSucceeded',
  'WebhookAttemptFailed',
  'WebhookDeliverySucceeded',
  'WebhookDeliveryFailed',
  'WebhookDeliveryRetryRequested',
] as const satisfies readonly WebhookDeliveryEvent['type'][];

type Known = {
  deliveryId: string;
  accountId: string;
  webhookId: string;
  webhookAgentId: string | null;
  test: boolean;
  maxAttempts: number;
  attempts: number;
  body: string;
  channel: string | null;
  /** the delivery is on a manual retry: its one attempt ends it */
  retrying: boolean;
};
export type WebhookDeliveryState =
  | { status: 'none' }
  | (Known & { status: 'pending'; nextAttemptAt: string })
  | (Known & { status: 'succeeded' | 'failed' });

/** Longest response body kept per attempt (characters). */
export const RESPONSE_BODY_LIMIT = 1024;
export const ERROR_MESSAGE_LIMIT = 500;
/** an upstream answer as a fact keeps it: bounded and storable (docs/input-rules.md#what-upstream-servers-answer) */
const clip = (s: string | null, n: number) => storableOrNull(s, n);

export const webhookDeliveryDecider: Decider<WebhookDeliveryCommand, WebhookDeliveryEvent, WebhookDeliveryState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const { now, accountId } = cmd.metadata;
    if (cmd.type === 'ScheduleDelivery') {
      if (s.status !== 'none') return []; // the same source event again: already scheduled
      const { maxAttempts = MAX_ATTEMPTS, test = false, firstAttemptClaim, ...rest } = cmd.data;
      if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS) {
        throw new DomainError('VALIDATION_ERROR', `maxAttempts must be 1-${MAX_ATTEMPTS}`);
      }
      // a test send has no timeline row to claim: it is sent by its own reactor
      const claim = firstAttemptClaim && !test ? { firstAttemptClaim } : {};
      return [
        {
          type: 'WebhookDeliveryScheduled',
          data: { ...rest, accountId, maxAttempts, test, scheduledAt: now, firstAttemptAt: now, ...claim },
        },
      ];
    }
    if (s.status === 'none' || s.accountId !== accountId) throw new DomainError('WEBHOOK_DELIVERY_NOT_FOUND', 'Delivery not found');
    switch (cmd.type) {
      case 'RecordAttempt': {
        const { attempt, result } = cmd.data;
        // a finished delivery, or an attempt already recorded (a retry of the recording), changes nothing
        if (s.status !== 'pending' || attempt <= s.attempts) return [];
        if (attempt !== s.attempts + 1)
          throw new DomainError('CONCURRENCY_CONFLICT', `attempt ${attempt} recorded before attempt ${s.attempts + 1}`);
        const base = {
          deliveryId: s.deliveryId,
          accountId: s.accountId,
          attempt,
          durationMs: Math.max(0, Math.round(result.durationMs)),
          attemptedAt: now,
        };
        // what both endings of the delivery record about it
        const finished = {
          deliveryId: s.deliveryId,
          accountId: s.accountId,
          webhookId: s.webhookId,
          webhookAgentId: s.webhookAgentId,
          attempts: attempt,
          test: s.test,
        };
        if (result.ok) {
          return [
            {
              type: 'WebhookAttemptSucceeded',
              data: { ...base, httpStatus: result.httpStatus, responseBody: clip(result.responseBody, RESPONSE_BODY_LIMIT) },
            },
            {
              type: 'WebhookDeliverySucceeded',
              data: {
                ...finished,
                deliveredAt: now,
              },
            },
          ];
        }
        const delay = nextDelayS(attempt, { status: result.httpStatus, retryAfterS: result.retryAfterS, maxAttempts: s.maxAttempts });
        const failed: WebhookDeliveryEvent = {
          type: 'WebhookAttemptFailed',
          data: {
            ...base,
            httpStatus: result.httpStatus,
            errorMessage: clip(result.errorMessage, ERROR_MESSAGE_LIMIT) ?? '',
            responseBody: clip(result.responseBody, RESPONSE_BODY_LIMIT),
            nextAttemptAt: delay === null ? null : addSeconds(now, delay),
          },
        };
        if (delay !== null) return [failed];
        return [
          failed,
          {
            type: 'WebhookDeliveryFailed',
            data: { ...finished, reason: s.retrying ? 'retry_failed' : 'exhausted', failedAt: now },
          },
        ];
      }
      case 'AbandonDelivery':
        if (s.status !== 'pending') return [];
        return [
          {
            type: 'WebhookDeliveryFailed',
            data: {
              deliveryId: s.deliveryId,
              accountId: s.accountId,
              webhookId: s.webhookId,
              webhookAgentId: s.webhookAgentId,
              attempts: s.attempts,
              test: s.test,
              reason: cmd.data.reason,
              failedAt: now,
            },
          },
        ];
      case 'RetryDelivery':
        if (s.status === 'pending')
          throw new DomainError(
            'WEBHOOK_DELIVERY_PENDING',
            `This delivery is still being attempted (next attempt at ${s.nextAttemptAt}); it can be sent again once it has finished.`,
          );
        return [
          {
            type: 'WebhookDeliveryRetryRequested',
            data: {
              deliveryId: s.deliveryId,
              accountId: s.accountId,
              webhookId: s.webhookId,
              webhookAgentId: s.webhookAgentId,
              attempt: s.attempts + 1,
              previousStatus: s.status,
              source: cmd.data.source,
              test: s.test,
              requestedAt: now,
            },
          },
        ];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'WebhookDeliveryScheduled': {
        const d = e.data;
        return {
          status: 'pending',
          deliveryId: d.deliveryId,
          accountId: d.accountId,
          webhookId: d.webhookId,
          webhookAgentId: d.webhookAgentId,
          test: d.test,
          maxAttempts: d.maxAttempts,
          attempts: 0,
          body: d.body,
          channel: d.channel,
          retrying: false,
          nextAttemptAt: d.firstAttemptAt,
        };
      }
      case 'WebhookAttemptSucceeded':
        return s.status === 'none' ? s : { ...s, attempts: e.data.attempt };
      case 'WebhookAttemptFailed':
        return s.status === 'pending' ? { ...s, attempts: e.data.attempt, nextAttemptAt: e.data.nextAttemptAt ?? s.nextAttemptAt } : s;
      case 'WebhookDeliverySucceeded':
        return s.status === 'none' ? s : { ...stripNext(s), status: 'succeeded' };
      case 'WebhookDeliveryFailed':
        return s.status === 'none' ? s : { ...stripNext(s), status: 'failed' };
      case 'WebhookDeliveryRetryRequested':
        // exactly one more attempt: maxAttempts becomes this attempt's number, so its failure ends the delivery
        return s.status === 'none'
          ? s
          : { ...stripNext(s), status: 'pending', retrying: true, maxAttempts: e.data.attempt, nextAttemptAt: e.data.requestedAt };
      default:
        return s;
    }
  },
};

const stripNext = (s: Exclude<WebhookDeliveryState, { status: 'none' }>): Known => {
  const { deliveryId, accountId, webhookId, webhookAgentId, test, maxAttempts, attempts, body, channel, retrying } = s;
  return { deliveryId, accountId, webhookId, webhookAgentId, test, maxAttempts, attempts, body, channel, retrying };
};

import {
  type WebhookDeliveryEvent,
  type WebhookDeliveryState,
  webhookDeliveryDecider,
  webhookDeliveryStream,
} from '../../domain/webhook/webhook-delivery.decider.js';
import { defineHistory, type HistoryView } from '../audit/history.js';

type DeliveryView = {
  deliveryId: string;
  webhookId: string | null;
  eventType: string | null;
  status: string | null;
  test: boolean;
  attempts: number;
  lastHttpStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  failureReason: string | null;
  createdAt: string | null;
  finishedAt: string | null;
};

/** the delivery log's names for the aggregate's statuses (docs/webhooks.md#delivery-log) */
const deliveryStatus = (s: WebhookDeliveryState): string | null =>
  s.status === 'none' ? null : s.status === 'succeeded' ? 'success' : s.status;

/** A webhook delivery's history: its stream, the delivery log's status after each step. */
export const deliveryHistory: HistoryView = defineHistory<WebhookDeliveryEvent, WebhookDeliveryState, DeliveryView>({
  kind: 'webhook_delivery',
  what: 'Delivery',
  notFound: 'WEBHOOK_DELIVERY_NOT_FOUND',
  stream: webhookDeliveryStream,
  decider: webhookDeliveryDecider,
  accountOf: (s) => (s.status === 'none' ? null : s.accountId),
  initial: (deliveryId) => ({
    deliveryId,
    webhookId: null,
    eventType: null,
    status: null,
    test: false,
    attempts: 0,
    lastHttpStatus: null,
    lastError: null,
    nextAttemptAt: null,
    failureReason: null,
    createdAt: null,
    finishedAt: null,
  }),
  step: (v, e, s) => {
    const base = { ...v, status: deliveryStatus(s), nextAttemptAt: s.status === 'pending' ? s.nextAttemptAt : null };
    switch (e.type) {
      case 'WebhookDeliveryScheduled':
        return {
          ...base,
          deliveryId: e.data.deliveryId,
          webhookId: e.data.webhookId,
          eventType: e.data.eventType,
          test: e.data.test,
          createdAt: e.data.scheduledAt,
        };
      case 'WebhookAttemptSucceeded':
        return { ...base, attempts: e.data.attempt, lastHttpStatus: e.data.httpStatus, lastError: null };
      case 'WebhookAttemptFailed':
        return { ...base, attempts: e.data.attempt, lastHttpStatus: e.data.httpStatus, lastError: e.data.errorMessage };
      case 'WebhookDeliverySucceeded':
        return { ...base, finishedAt: e.data.deliveredAt, failureReason: null };
      case 'WebhookDeliveryFailed':
        return { ...base, finishedAt: e.data.failedAt, failureReason: e.data.reason };
      case 'WebhookDeliveryRetryRequested':
        return { ...base, finishedAt: null, failureReason: null };
      default:
        return base;
    }
  },
  status: (v) => v.status,
});

import { sql, type Kysely } from 'kysely';
import type { RecordedEvent } from '../application/ports/event-store.port.js';
import type { UsageMetric } from '../application/accounts/usage.port.js';
import type { WebhookDeliveryEvent } from '../domain/webhook/webhook-delivery.decider.js';
import type { Projector } from './shared/projector.js';
import type { ReadDb } from './shared/read-db.js';

type Counted = Extract<WebhookDeliveryEvent, { type: 'WebhookDeliverySucceeded' | 'WebhookDeliveryFailed' }>;

/**
 * Analytics: daily counters per account (`usage_daily`), read by GET /v1/usage. Counters are increments, so
 * they rely on the engine's exactly-once batches (rows and checkpoint in one transaction). Messaging and
 * calls add their event types here when they land; test deliveries (`POST /v1/webhooks/test`) are not usage.
 */
export const usageProjector: Projector = {
  name: 'usage_v1',
  handles: new Set(['WebhookDeliverySucceeded', 'WebhookDeliveryFailed']),
  tables: ['usage_daily'],
  async apply(db: Kysely<ReadDb>, raw: RecordedEvent) {
    const e = raw as unknown as RecordedEvent<Counted>;
    if (e.data.test) return;
    const at = e.type === 'WebhookDeliverySucceeded' ? e.data.deliveredAt : e.data.failedAt;
    const metrics: UsageMetric[] = ['webhook_deliveries', e.type === 'WebhookDeliverySucceeded' ? 'webhook_deliveries_succeeded' : 'webhook_deliveries_failed'];
    for (const metric of metrics) {
      await db.insertInto('usage_daily').values({ account_id: e.data.accountId, day: at.slice(0, 10), metric, count: '1' })
        .onConflict((oc) => oc.columns(['account_id', 'metric', 'day']).doUpdateSet({ count: sql`usage_daily.count + 1` })).execute();
    }
  },
};

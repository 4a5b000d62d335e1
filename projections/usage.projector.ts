import { type Kysely, sql } from 'kysely';
import type { UsageMetric } from '../application/accounts/usage.port.js';
import type { RecordedEvent } from '../application/ports/event-store.port.js';
import type { WebhookDeliveryEvent } from '../domain/webhook/webhook-delivery.decider.js';
import { defineProjector } from './shared/projector.js';
import type { ReadDb } from './shared/read-db.js';

type Counted = Extract<WebhookDeliveryEvent, { type: 'WebhookDeliverySucceeded' | 'WebhookDeliveryFailed' }>;

async function count(db: Kysely<ReadDb>, e: RecordedEvent<Counted>, at: string, outcome: UsageMetric): Promise<void> {
  if (e.data.test) return;
  for (const metric of ['webhook_deliveries', outcome] satisfies UsageMetric[]) {
    await db
      .insertInto('usage_daily')
      .values({ account_id: e.data.accountId, day: at.slice(0, 10), metric, count: '1' })
      .onConflict((oc) => oc.columns(['account_id', 'metric', 'day']).doUpdateSet({ count: sql`usage_daily.count + 1` }))
      .execute();
  }
}

/**
 * Analytics: daily counters per account (`usage_daily`), read by GET /v1/usage. Counters are increments, so
 * they rely on the engine's exactly-once batches (rows and checkpoint in one transaction). Messaging and
 * calls add their event types here when they land; test deliveries (`POST /v1/webhooks/test`) are not usage.
 */
export const usageProjector = defineProjector<Counted>({
  name: 'usage_v1',
  tables: ['usage_daily'],
  on: {
    WebhookDeliverySucceeded: (db, e) => count(db, e, e.data.deliveredAt, 'webhook_deliveries_succeeded'),
    WebhookDeliveryFailed: (db, e) => count(db, e, e.data.failedAt, 'webhook_deliveries_failed'),
  },
});

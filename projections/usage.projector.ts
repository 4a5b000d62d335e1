import { type Kysely, sql } from 'kysely';
import type { UsageMetric } from '../application/accounts/usage.port.js';
import type { RecordedEvent } from '../application/ports/event-store.port.js';
import type { WebhookDeliveryEvent } from '../domain/webhook/webhook-delivery.decider.js';
import { defineProjector } from './shared/projector.js';
import type { ReadDb } from './shared/read-db.js';

type Counted = Extract<WebhookDeliveryEvent, { type: 'WebhookDeliverySucceeded' | 'WebhookDeliveryFailed' }>;

/** Adds the batch's counts per account, day and metric, one statement for the whole batch. */
async function count(db: Kysely<ReadDb>, events: readonly RecordedEvent<Counted>[]): Promise<void> {
  const sums = new Map<string, { account_id: string; day: string; metric: UsageMetric; count: number }>();
  for (const e of events) {
    if (e.data.test) continue;
    const [at, outcome]: [string, UsageMetric] =
      e.type === 'WebhookDeliverySucceeded'
        ? [e.data.deliveredAt, 'webhook_deliveries_succeeded']
        : [e.data.failedAt, 'webhook_deliveries_failed'];
    for (const metric of ['webhook_deliveries', outcome] satisfies UsageMetric[]) {
      const key = `${e.data.accountId}|${at.slice(0, 10)}|${metric}`;
      const sum = sums.get(key) ?? { account_id: e.data.accountId, day: at.slice(0, 10), metric, count: 0 };
      sum.count++;
      sums.set(key, sum);
    }
  }
  if (sums.size === 0) return;
  await db
    .insertInto('usage_daily')
    .values([...sums.values()].map((x) => ({ ...x, count: String(x.count) })))
    .onConflict((oc) => oc.columns(['account_id', 'metric', 'day']).doUpdateSet({ count: sql`usage_daily.count + excluded.count` }))
    .execute();
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
    WebhookDeliverySucceeded: (db, e) => count(db, [e]),
    WebhookDeliveryFailed: (db, e) => count(db, [e]),
  },
  batch: count,
});

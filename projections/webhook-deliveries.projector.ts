import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../application/ports/event-store.port.js';
import { assertNever } from '../domain/shared/types.js';
import { webhookDeliveryEventTypes, type WebhookDeliveryEvent } from '../domain/webhook/webhook-delivery.decider.js';
import type { Projector } from './shared/projector.js';
import type { ReadDb } from './shared/read-db.js';

/**
 * The delivery log (one row per delivery, one per attempt) and the retry timeline (`webhook_due_attempts`:
 * one row per pending delivery, the attempt due next and when). The delivery row's revision guards
 * replays for all three tables. Test deliveries never enter the timeline (they are sent synchronously).
 * Workers own only the claim columns of the timeline; a new due attempt clears them.
 */
export const webhookDeliveriesProjector: Projector = {
  name: 'webhook_deliveries_v1',
  handles: new Set<string>(webhookDeliveryEventTypes),
  tables: ['webhook_deliveries', 'webhook_delivery_attempts', 'webhook_due_attempts'],
  async apply(db: Kysely<ReadDb>, raw: RecordedEvent) {
    const e = raw as unknown as RecordedEvent<WebhookDeliveryEvent>;
    const revision = String(e.streamRevision);
    const id = e.data.deliveryId;
    // one guarded statement per table, no read first: an update that matches no row (already applied, or
    // no delivery row) means the event changes nothing
    const delivery = db.updateTable('webhook_deliveries').where('delivery_id', '=', id).where('revision', '<', revision);
    switch (e.type) {
      case 'WebhookDeliveryScheduled': {
        const d = e.data;
        const r = await db.insertInto('webhook_deliveries').values({
          delivery_id: id, account_id: d.accountId, webhook_id: d.webhookId, webhook_agent_id: d.webhookAgentId, agent_id: d.agentId,
          event_type: d.eventType, channel: d.channel, message_id: d.messageId, source_event_id: d.sourceEventId, test: d.test,
          status: 'pending', http_status: null, error_message: null, response_body: null, attempt_count: 0, last_attempt_at: null,
          next_retry_at: d.firstAttemptAt, created_at: d.scheduledAt, finished_at: null, revision,
        }).onConflict((oc) => oc.column('delivery_id').doNothing()).returning('delivery_id').executeTakeFirst();
        if (!d.test && r) {
          await db.insertInto('webhook_due_attempts').values({
            delivery_id: id, account_id: d.accountId, attempt: 1, due_at: d.firstAttemptAt, claimed_by: null, claimed_until: null, revision,
          }).onConflict((oc) => oc.column('delivery_id').doNothing()).execute();
        }
        return;
      }
      case 'WebhookAttemptSucceeded':
      case 'WebhookAttemptFailed': {
        const d = e.data;
        const failed = e.type === 'WebhookAttemptFailed' ? e.data : null;
        const r = await delivery.set({
          http_status: d.httpStatus, error_message: failed?.errorMessage ?? null, response_body: d.responseBody, attempt_count: d.attempt,
          last_attempt_at: d.attemptedAt, next_retry_at: failed?.nextAttemptAt ?? null, revision,
        }).executeTakeFirst();
        if (r.numUpdatedRows === 0n) return;
        await db.insertInto('webhook_delivery_attempts').values({
          delivery_id: id, attempt: d.attempt, account_id: d.accountId, status: failed ? 'failed' : 'success', http_status: d.httpStatus,
          error_message: failed?.errorMessage ?? null, response_body: d.responseBody, duration_ms: d.durationMs, attempted_at: d.attemptedAt,
          next_retry_at: failed?.nextAttemptAt ?? null,
        }).onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing()).execute();
        if (failed?.nextAttemptAt) {
          await db.updateTable('webhook_due_attempts')
            .set({ attempt: d.attempt + 1, due_at: failed.nextAttemptAt, claimed_by: null, claimed_until: null, revision })
            .where('delivery_id', '=', id).execute();
        }
        return;
      }
      case 'WebhookDeliverySucceeded': {
        const r = await delivery.set({ status: 'success', next_retry_at: null, finished_at: e.data.deliveredAt, revision }).executeTakeFirst();
        if (r.numUpdatedRows > 0n) await db.deleteFrom('webhook_due_attempts').where('delivery_id', '=', id).execute();
        return;
      }
      case 'WebhookDeliveryFailed': {
        const abandoned = e.data.reason !== 'exhausted';
        const r = await delivery.set({
          status: 'failed', next_retry_at: null, finished_at: e.data.failedAt, revision,
          ...(abandoned ? { error_message: e.data.reason === 'webhook_deleted' ? 'webhook deleted before delivery' : 'webhook disabled before delivery' } : {}),
        }).executeTakeFirst();
        if (r.numUpdatedRows > 0n) await db.deleteFrom('webhook_due_attempts').where('delivery_id', '=', id).execute();
        return;
      }
      default:
        assertNever(e);
    }
  },
};

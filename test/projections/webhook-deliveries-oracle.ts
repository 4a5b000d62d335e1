import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { WebhookDeliveryEvent } from '../../domain/webhook/webhook-delivery.decider.js';
import { defineProjector, matched, rowRevision } from '../../projections/shared/projector.js';
import type { ReadDb } from '../../projections/shared/read-db.js';

type Attempted = Extract<WebhookDeliveryEvent, { type: 'WebhookAttemptSucceeded' | 'WebhookAttemptFailed' }>;

/** The delivery row, guarded: matches only while the row reflects an older revision of the stream. */
const delivery = (db: Kysely<ReadDb>, e: RecordedEvent<WebhookDeliveryEvent>) =>
  db.updateTable('webhook_deliveries').where('delivery_id', '=', e.data.deliveryId).where('revision', '<', rowRevision(e));

/** An attempt: the delivery row, the attempt's own row and, when another attempt follows, the timeline. */
async function attempted(db: Kysely<ReadDb>, e: RecordedEvent<Attempted>): Promise<void> {
  const d = e.data;
  const revision = rowRevision(e);
  const failed = e.type === 'WebhookAttemptFailed' ? e.data : null;
  const applied = await matched(
    delivery(db, e).set({
      http_status: d.httpStatus,
      error_message: failed?.errorMessage ?? null,
      response_body: d.responseBody,
      attempt_count: d.attempt,
      last_attempt_at: d.attemptedAt,
      next_retry_at: failed?.nextAttemptAt ?? null,
      revision,
    }),
  );
  if (!applied) return;
  await db
    .insertInto('webhook_delivery_attempts')
    .values({
      delivery_id: d.deliveryId,
      attempt: d.attempt,
      account_id: d.accountId,
      status: failed ? 'failed' : 'success',
      http_status: d.httpStatus,
      error_message: failed?.errorMessage ?? null,
      response_body: d.responseBody,
      duration_ms: d.durationMs,
      attempted_at: d.attemptedAt,
      next_retry_at: failed?.nextAttemptAt ?? null,
    })
    .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
    .execute();
  if (failed?.nextAttemptAt) {
    await db
      .updateTable('webhook_due_attempts')
      .set({ attempt: d.attempt + 1, due_at: failed.nextAttemptAt, claimed_by: null, claimed_until: null, revision })
      .where('delivery_id', '=', d.deliveryId)
      .execute();
  }
}

/**
 * THE ORACLE of test/projections/webhook-deliveries-batch.spec.ts: the delivery-log projector as it was before
 * it became set-based, one guarded statement per event, kept verbatim as the reference the batch must equal.
 *
 * The delivery log (one row per delivery, one per attempt) and the retry timeline (`webhook_due_attempts`:
 * one row per pending delivery, the attempt due next and when). The delivery row's revision guards
 * replays for all three tables: the attempt and timeline writes happen only when the guarded delivery update
 * matched. Test deliveries never enter the timeline (they are sent synchronously). Workers own only the
 * claim columns of the timeline; a new due attempt clears them.
 */
export const oneStatementPerEvent = defineProjector<WebhookDeliveryEvent>({
  name: 'webhook_deliveries_v1',
  tables: ['webhook_deliveries', 'webhook_delivery_attempts', 'webhook_due_attempts'],
  on: {
    async WebhookDeliveryScheduled(db, e) {
      const d = e.data;
      const revision = rowRevision(e);
      const r = await db
        .insertInto('webhook_deliveries')
        .values({
          delivery_id: d.deliveryId,
          account_id: d.accountId,
          webhook_id: d.webhookId,
          webhook_agent_id: d.webhookAgentId,
          agent_id: d.agentId,
          event_type: d.eventType,
          channel: d.channel,
          message_id: d.messageId,
          source_event_id: d.sourceEventId,
          test: d.test,
          status: 'pending',
          http_status: null,
          error_message: null,
          response_body: null,
          attempt_count: 0,
          last_attempt_at: null,
          next_retry_at: d.firstAttemptAt,
          created_at: d.scheduledAt,
          finished_at: null,
          revision,
        })
        .onConflict((oc) => oc.column('delivery_id').doNothing())
        .returning('delivery_id')
        .executeTakeFirst();
      if (!d.test && r) {
        await db
          .insertInto('webhook_due_attempts')
          .values({
            delivery_id: d.deliveryId,
            account_id: d.accountId,
            attempt: 1,
            due_at: d.firstAttemptAt,
            claimed_by: d.firstAttemptClaim?.by ?? null,
            claimed_until: d.firstAttemptClaim?.until ?? null,
            revision,
          })
          .onConflict((oc) => oc.column('delivery_id').doNothing())
          .execute();
      }
    },
    WebhookAttemptSucceeded: attempted,
    WebhookAttemptFailed: attempted,
    async WebhookDeliverySucceeded(db, e) {
      const applied = await matched(
        delivery(db, e).set({ status: 'success', next_retry_at: null, finished_at: e.data.deliveredAt, revision: rowRevision(e) }),
      );
      if (applied) await db.deleteFrom('webhook_due_attempts').where('delivery_id', '=', e.data.deliveryId).execute();
    },
    async WebhookDeliveryFailed(db, e) {
      const abandoned = e.data.reason === 'webhook_deleted' || e.data.reason === 'webhook_disabled';
      const applied = await matched(
        delivery(db, e).set({
          status: 'failed',
          next_retry_at: null,
          finished_at: e.data.failedAt,
          revision: rowRevision(e),
          ...(abandoned
            ? {
                error_message: e.data.reason === 'webhook_deleted' ? 'webhook deleted before delivery' : 'webhook disabled before delivery',
              }
            : {}),
        }),
      );
      if (applied) await db.deleteFrom('webhook_due_attempts').where('delivery_id', '=', e.data.deliveryId).execute();
    },
    async WebhookDeliveryRetryRequested(db, e) {
      const d = e.data;
      const revision = rowRevision(e);
      const applied = await matched(delivery(db, e).set({ status: 'pending', next_retry_at: d.requestedAt, finished_at: null, revision }));
      if (!applied) return;
      const due = { attempt: d.attempt, due_at: d.requestedAt, claimed_by: null, claimed_until: null, revision };
      await db
        .insertInto('webhook_due_attempts')
        .values({ delivery_id: d.deliveryId, account_id: d.accountId, ...due })
        .onConflict((oc) => oc.column('delivery_id').doUpdateSet(due))
        .execute();
    },
  },
});

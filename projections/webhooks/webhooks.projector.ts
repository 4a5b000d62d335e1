import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { WebhookEvent } from '../../domain/webhook/webhook.decider.js';
import { guardedRow } from '../shared/guarded.js';
import { defineProjector, rowRevision } from '../shared/projector.js';

/** The scope a webhook stream configures: the stream's id (`webhook-<scope>`). */
const scopeOf = (e: RecordedEvent) => e.streamName.slice(e.streamName.indexOf('-') + 1);

/** The scope's row, guarded: matches only while the row reflects an older revision of the stream. */
const scope = guardedRow(
  (db) => db.updateTable('webhooks'),
  (e: RecordedEvent<WebhookEvent>) => ({ scope_key: scopeOf(e) }),
);

/**
 * Webhook configurations: one row per scope (`scope_key` is the account id for the master webhook, the agent
 * id for an agent's own), as the aggregate streams are keyed. A delete keeps the row with `deleted_at`; the
 * next configure of the scope overwrites it with the new webhook.
 */
export const webhooksProjector = defineProjector<WebhookEvent>({
  name: 'webhooks_v1',
  // it only writes: a batch's writes and its checkpoint go as one message (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['webhooks'],
  on: {
    async WebhookCreated(db, e) {
      const d = e.data;
      const revision = rowRevision(e);
      const values = {
        webhook_id: d.webhookId,
        account_id: d.accountId,
        agent_id: d.agentId,
        url: d.url,
        secret: d.secret,
        status: 'active',
        context_limit: d.contextLimit,
        timeout_seconds: d.timeout,
        events: JSON.stringify(d.events),
        consecutive_failures: 0,
        created_position: e.checkpoint,
        created_at: d.createdAt,
        updated_at: d.createdAt,
        deleted_at: null,
        revision,
      };
      await db
        .insertInto('webhooks')
        .values({ scope_key: scopeOf(e), ...values })
        .onConflict((oc) => oc.column('scope_key').doUpdateSet(values).where('webhooks.revision', '<', revision))
        .execute();
    },
    async WebhookUpdated(db, e) {
      const d = e.data;
      await scope(db, e, {
        url: d.url,
        secret: d.secret,
        context_limit: d.contextLimit,
        timeout_seconds: d.timeout,
        events: JSON.stringify(d.events),
        status: 'active',
        consecutive_failures: 0,
        updated_at: d.updatedAt,
      });
    },
    WebhookDeleted: (db, e) => scope(db, e, { deleted_at: e.data.deletedAt, updated_at: e.data.deletedAt }),
    async WebhookDeliveryExhausted(db, e) {
      await scope(db, e, (eb) => ({
        status: eb.case().when('status', '=', 'disabled').then('disabled').else('failing').end(),
        consecutive_failures: e.data.consecutiveFailures,
      }));
    },
    WebhookDisabled: (db, e) => scope(db, e, { status: 'disabled', updated_at: e.data.disabledAt }),
    WebhookRecovered: (db, e) => scope(db, e, { status: 'active', consecutive_failures: 0 }),
    // the warning and its e-mail are notices (webhook_notices_v1); the configuration only moves its revision
    WebhookDisableWarned: (db, e) => scope(db, e, {}),
    WebhookWarningMailed: (db, e) => scope(db, e, {}),
  },
});

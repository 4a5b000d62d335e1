import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../application/ports/event-store.port.js';
import { assertNever } from '../domain/shared/types.js';
import { webhookEventTypes, type WebhookEvent } from '../domain/webhook/webhook.decider.js';
import { alreadyApplied, type Projector } from './shared/projector.js';
import type { ReadDb } from './shared/read-db.js';

/**
 * Webhook configurations: one row per scope (`scope_key` is the account id for the master webhook, the agent
 * id for an agent's own), as the aggregate streams are keyed. A delete keeps the row with `deleted_at`; the
 * next configure of the scope overwrites it with the new webhook.
 */
export const webhooksProjector: Projector = {
  name: 'webhooks_v1',
  handles: new Set<string>(webhookEventTypes),
  tables: ['webhooks'],
  async apply(db: Kysely<ReadDb>, raw: RecordedEvent) {
    const e = raw as unknown as RecordedEvent<WebhookEvent>;
    const revision = String(e.streamRevision);
    const scopeKey = raw.streamName.slice(raw.streamName.indexOf('-') + 1);
    const row = await db.selectFrom('webhooks').select('revision').where('scope_key', '=', scopeKey).executeTakeFirst();
    if (row && alreadyApplied(row.revision, e)) return;
    const update = db.updateTable('webhooks').where('scope_key', '=', scopeKey);
    switch (e.type) {
      case 'WebhookCreated': {
        const d = e.data;
        const values = {
          webhook_id: d.webhookId, account_id: d.accountId, agent_id: d.agentId, url: d.url, secret: d.secret, status: 'active',
          context_limit: d.contextLimit, timeout_seconds: d.timeout, consecutive_failures: 0, created_position: e.checkpoint, created_at: d.createdAt, updated_at: d.createdAt,
          deleted_at: null, revision,
        };
        await db.insertInto('webhooks').values({ scope_key: scopeKey, ...values })
          .onConflict((oc) => oc.column('scope_key').doUpdateSet(values)).execute();
        return;
      }
      case 'WebhookUpdated': {
        const d = e.data;
        await update.set({
          url: d.url, secret: d.secret, context_limit: d.contextLimit, timeout_seconds: d.timeout, status: 'active', consecutive_failures: 0,
          updated_at: d.updatedAt, revision,
        }).execute();
        return;
      }
      case 'WebhookDeleted':
        await update.set({ deleted_at: e.data.deletedAt, updated_at: e.data.deletedAt, revision }).execute();
        return;
      case 'WebhookDeliveryExhausted':
        await update.set((eb) => ({
          status: eb.case().when('status', '=', 'disabled').then('disabled').else('failing').end(),
          consecutive_failures: e.data.consecutiveFailures, revision,
        })).execute();
        return;
      case 'WebhookDisabled':
        await update.set({ status: 'disabled', updated_at: e.data.disabledAt, revision }).execute();
        return;
      case 'WebhookRecovered':
        await update.set({ status: 'active', consecutive_failures: 0, revision }).execute();
        return;
      default:
        assertNever(e);
    }
  },
};

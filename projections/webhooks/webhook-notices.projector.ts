import type { Insertable, Kysely } from 'kysely';
import type { WebhookEvent } from '../../domain/webhook/webhook.decider.js';
import { defineProjector } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';

/** A webhook health notice of the delivery log (migration 121; docs/webhooks.md#notices). */
export interface WebhookNoticesTable {
  /** the id of the event the notice is about */
  notice_id: string;
  account_id: string;
  webhook_id: string;
  /** disable_warning, disabled, recovered */
  kind: string;
  consecutive_failures: number | null;
  at: Date | string;
  /** warnings only: pending, sent, no_address */
  mail_status: string | null;
  mailed_to: string | null;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    webhook_notices: WebhookNoticesTable;
  }
}

type Noticed = Extract<WebhookEvent, { type: 'WebhookDisableWarned' | 'WebhookDisabled' | 'WebhookRecovered' | 'WebhookWarningMailed' }>;

/** A notice of the webhook, recorded once (by the event's id); a warning's mail columns are set when it is mailed. */
const addNotice = (
  db: Kysely<ReadDb>,
  noticeId: string,
  d: Readonly<{ accountId: string; webhookId: string }>,
  o: Pick<Insertable<WebhookNoticesTable>, 'kind' | 'consecutive_failures' | 'at' | 'mail_status'>,
) =>
  db
    .insertInto('webhook_notices')
    .values({ notice_id: noticeId, account_id: d.accountId, webhook_id: d.webhookId, mailed_to: null, ...o })
    .onConflict((oc) => oc.column('notice_id').doNothing())
    .execute();

/**
 * Notices of the delivery log: a webhook warned before it is disabled (and where the warning's e-mail went), a
 * webhook disabled, a webhook active again. One row per event, keyed by the event id, so a replay writes nothing
 * new; the mail outcome sets the warning's two mail columns to the same values however often it is applied.
 */
export const webhookNoticesProjector = defineProjector<Noticed>({
  name: 'webhook_notices_v1',
  // it only writes: a batch's writes and its checkpoint go as one message (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['webhook_notices'],
  on: {
    async WebhookDisableWarned(db, e) {
      await addNotice(db, e.id, e.data, {
        kind: 'disable_warning',
        consecutive_failures: e.data.consecutiveFailures,
        at: e.data.warnedAt,
        mail_status: 'pending',
      });
    },
    async WebhookDisabled(db, e) {
      await addNotice(db, e.id, e.data, {
        kind: 'disabled',
        consecutive_failures: e.data.consecutiveFailures,
        at: e.data.disabledAt,
        mail_status: null,
      });
    },
    async WebhookRecovered(db, e) {
      await addNotice(db, e.id, e.data, { kind: 'recovered', consecutive_failures: null, at: e.data.recoveredAt, mail_status: null });
    },
    async WebhookWarningMailed(db, e) {
      await db
        .updateTable('webhook_notices')
        .set({ mail_status: e.data.to ? 'sent' : 'no_address', mailed_to: e.data.to })
        .where('notice_id', '=', e.data.warningId)
        .where('account_id', '=', e.data.accountId)
        .execute();
    },
  },
});

import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { RecordingAddOnEvent } from '../../domain/recording-addon/recording-addon.decider.js';
import { guardedRow } from '../shared/guarded.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';
import type { RecordingAddOnsTable } from './tables.js';

/** The account's row, guarded: matches only while the row reflects an older revision of the stream. */
const row = guardedRow(
  (db) => db.updateTable('recording_addons'),
  (e: RecordedEvent<RecordingAddOnEvent>) => ({ account_id: e.data.accountId }),
);

/** A paid period; the primary key (account, period) makes a replay a no-op. */
const paidPeriod = (
  db: Kysely<ReadDb>,
  e: RecordedEvent<Extract<RecordingAddOnEvent, { type: 'RecordingAddOnEnabled' | 'RecordingAddOnRenewed' }>>,
) =>
  db
    .insertInto('recording_addon_periods')
    .values({
      account_id: e.data.accountId,
      period: e.data.period,
      starts_at: e.data.periodStart,
      ends_at: e.data.periodEnd,
      charge_id: e.data.chargeId,
      amount_micros: String(e.data.amountMicros),
    })
    .onConflict((oc) => oc.columns(['account_id', 'period']).doNothing())
    .execute();

/**
 * `recording_addons`: one row per account that enabled the add-on, as its stream stands; `recording_addon_periods`:
 * every period paid for (docs/recording-addon.md).
 */
export const recordingAddOnProjector = defineProjector<RecordingAddOnEvent>({
  name: 'recording_addon_v1',
  // it only writes: a batch's writes and its checkpoint go as one message (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['recording_addons', 'recording_addon_periods'],
  on: {
    async RecordingAddOnEnabled(db, e) {
      const values = {
        status: 'subscribed',
        renews: true,
        periods_paid: e.data.period + 1,
        current_period_start: e.data.periodStart,
        current_period_end: e.data.periodEnd,
        end_reason: null,
        updated_at: e.data.enabledAt,
        revision: rowRevision(e),
      } satisfies Omit<RecordingAddOnsTable, 'account_id'>;
      await db
        .insertInto('recording_addons')
        .values({ account_id: e.data.accountId, ...values })
        .onConflict((oc) => oc.column('account_id').doUpdateSet(values).where('recording_addons.revision', '<', rowRevision(e)))
        .execute();
      await paidPeriod(db, e);
    },
    RecordingAddOnResumed: (db, e) => row(db, e, { renews: true, end_reason: null, updated_at: e.data.resumedAt }),
    RecordingAddOnDisabled: (db, e) => row(db, e, { renews: false, end_reason: 'disabled', updated_at: e.data.disabledAt }),
    async RecordingAddOnRenewed(db, e) {
      await row(db, e, {
        periods_paid: e.data.period + 1,
        current_period_start: e.data.periodStart,
        current_period_end: e.data.periodEnd,
        updated_at: e.data.renewedAt,
      });
      await paidPeriod(db, e);
    },
    RecordingAddOnLapsed: (db, e) =>
      row(db, e, { status: 'ended', renews: false, end_reason: 'payment_failed', updated_at: e.data.lapsedAt }),
    RecordingAddOnExpired: (db, e) =>
      row(db, e, { status: 'ended', renews: false, end_reason: e.data.reason, updated_at: e.data.expiredAt }),
  },
});

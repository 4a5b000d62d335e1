import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { PhoneNumberEvent } from '../../domain/phone-number/phone-number.decider.js';
import { guardedRow } from '../shared/guarded.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';
import type { PhoneNumbersTable } from './tables.js';

/** A checkpoint (`a/b`, two unsigned integers) as text that sorts in checkpoint order. */
export const sortableCheckpoint = (c: string) =>
  c
    .split('/')
    .map((p) => p.padStart(20, '0'))
    .join('/');

/** The number's row, guarded: matches only while the row reflects an older revision of the stream. */
const number = guardedRow(
  (db) => db.updateTable('phone_numbers'),
  (e: RecordedEvent<PhoneNumberEvent>) => ({ number_id: e.data.numberId }),
);
/** For the steps that change nothing shown: the row only moves to the event's revision. */
const revisionOnly = async (db: Kysely<ReadDb>, e: RecordedEvent<PhoneNumberEvent>) => {
  await number(db, e, {});
};

/**
 * `phone_numbers`: one row per number from its provisioning request on (status provisioning, active,
 * released or failed; the API shows only active and released). Attach order is the order in which the
 * attaches were recorded in the log (their checkpoint), so an agent's first number is its outbound default.
 */
export const phoneNumbersProjector = defineProjector<PhoneNumberEvent>({
  name: 'phone_numbers_v1',
  // it only writes: a batch's writes and its checkpoint go as one message (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['phone_numbers'],
  on: {
    async NumberProvisioningRequested(db, e) {
      const revision = rowRevision(e);
      const row = {
        account_id: e.data.accountId,
        number_id: e.data.numberId,
        phone_number: null,
        country: e.data.country,
        area_code: e.data.areaCode,
        type: 'sms',
        status: 'provisioning',
        agent_id: null,
        attached_order: null,
        active_order: null,
        sip_trunk_id: null,
        carrier_id: null,
        renewal_status: 'ok',
        paid_through: null,
        failure_code: null,
        requested_at: e.data.requestedAt,
        created_at: null,
        released_at: null,
        revision,
      } satisfies PhoneNumbersTable;
      // a fresh attempt after a failed one starts the row over
      const { account_id: _account, number_id: _number, ...again } = row;
      await db
        .insertInto('phone_numbers')
        .values(row)
        .onConflict((oc) => oc.column('number_id').doUpdateSet(again).where('phone_numbers.revision', '<', revision))
        .execute();
    },
    NumberSlotHeld: revisionOnly,
    NumberRoutingConfigured: revisionOnly,
    NumberProvisioningAborted: revisionOnly,
    NumberReleaseRequested: revisionOnly,
    NumberReleaseFailed: revisionOnly,
    NumberPurchased: (db, e) => number(db, e, { phone_number: e.data.phoneNumber }),
    async NumberProvisioned(db, e) {
      await number(db, e, {
        status: 'active',
        phone_number: e.data.phoneNumber,
        created_at: e.data.provisionedAt,
        active_order: sortableCheckpoint(e.checkpoint),
        paid_through: e.data.paidThrough,
        renewal_status: 'ok',
      });
    },
    async NumberImported(db, e) {
      // not bought: no paid month, never due for renewal
      await db
        .insertInto('phone_numbers')
        .values({
          account_id: e.data.accountId,
          number_id: e.data.numberId,
          phone_number: e.data.phoneNumber,
          country: e.data.country,
          area_code: null,
          type: 'sms',
          status: 'active',
          agent_id: null,
          attached_order: null,
          active_order: sortableCheckpoint(e.checkpoint),
          sip_trunk_id: null,
          carrier_id: e.data.carrierId,
          renewal_status: 'ok',
          paid_through: null,
          failure_code: null,
          requested_at: e.data.importedAt,
          created_at: e.data.importedAt,
          released_at: null,
          revision: rowRevision(e),
        } satisfies PhoneNumbersTable)
        .onConflict((oc) => oc.column('number_id').doNothing())
        .execute();
    },
    NumberProvisioningFailed: (db, e) => number(db, e, { status: 'failed', failure_code: e.data.code }),
    async NumberAttached(db, e) {
      await number(db, e, {
        agent_id: e.data.agentId,
        attached_order: sortableCheckpoint(e.checkpoint),
      });
    },
    NumberDetached: (db, e) => number(db, e, { agent_id: null, attached_order: null }),
    NumberSipTrunkAssigned: (db, e) => number(db, e, { sip_trunk_id: e.data.sipTrunkId }),
    async NumberReleased(db, e) {
      await number(db, e, {
        status: 'released',
        agent_id: null,
        attached_order: null,
        sip_trunk_id: null,
        released_at: e.data.releasedAt,
      });
    },
    NumberRenewed: (db, e) => number(db, e, { paid_through: e.data.paidThrough, renewal_status: 'ok' }),
    NumberRenewalPaymentFailed: (db, e) => number(db, e, { renewal_status: 'payment_failed' }),
  },
});

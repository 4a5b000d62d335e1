import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../application/ports/event-store.port.js';
import { phoneNumberEventTypes, type PhoneNumberEvent } from '../domain/phone-number/phone-number.decider.js';
import { assertNever } from '../domain/shared/types.js';
import { alreadyApplied, type Projector } from './shared/projector.js';
import type { PhoneNumbersTable } from './shared/number-tables.js';
import type { ReadDb } from './shared/read-db.js';

/** A checkpoint (`a/b`, two unsigned integers) as text that sorts in checkpoint order. */
export const sortableCheckpoint = (c: string) => c.split('/').map((p) => p.padStart(20, '0')).join('/');

/**
 * `phone_numbers`: one row per number from its provisioning request on (status provisioning, active,
 * released or failed; the API shows only active and released). Attach order is the order in which the
 * attaches were recorded in the log (their checkpoint), so an agent's first number is its outbound default.
 */
export const phoneNumbersProjector: Projector = {
  name: 'phone_numbers_v1',
  handles: new Set<string>(phoneNumberEventTypes),
  tables: ['phone_numbers'],
  async apply(db: Kysely<ReadDb>, raw: RecordedEvent) {
    const e = raw as unknown as RecordedEvent<PhoneNumberEvent>;
    const revision = String(e.streamRevision);
    const id = e.data.numberId;
    if (e.type === 'NumberProvisioningRequested') {
      const row = {
        account_id: e.data.accountId, number_id: id, phone_number: null, country: e.data.country, area_code: e.data.areaCode, type: 'sms',
        status: 'provisioning', agent_id: null, attached_position: null, attached_order: null, sip_trunk_id: null, renewal_status: 'ok', paid_through: null,
        failure_code: null, requested_at: e.data.requestedAt, created_at: null, released_at: null, revision,
      } satisfies PhoneNumbersTable;
      // a fresh attempt after a failed one starts the row over
      const { account_id: _account, number_id: _number, ...again } = row;
      await db.insertInto('phone_numbers').values(row)
        .onConflict((oc) => oc.column('number_id').doUpdateSet(again).where('phone_numbers.revision', '<', revision))
        .execute();
      return;
    }
    const existing = await db.selectFrom('phone_numbers').select('revision').where('number_id', '=', id).executeTakeFirst();
    if (!existing || alreadyApplied(existing.revision, e)) return;
    const row = db.updateTable('phone_numbers').where('number_id', '=', id);
    switch (e.type) {
      case 'NumberSlotHeld': case 'NumberRoutingConfigured': case 'NumberProvisioningAborted':
      case 'NumberReleaseRequested': case 'NumberReleaseFailed':
        await row.set({ revision }).execute();
        return;
      case 'NumberPurchased':
        await row.set({ phone_number: e.data.phoneNumber, revision }).execute();
        return;
      case 'NumberProvisioned':
        await row.set({ status: 'active', phone_number: e.data.phoneNumber, created_at: e.data.provisionedAt, paid_through: e.data.paidThrough, renewal_status: 'ok', revision }).execute();
        return;
      case 'NumberProvisioningFailed':
        await row.set({ status: 'failed', failure_code: e.data.code, revision }).execute();
        return;
      case 'NumberAttached':
        await row.set({ agent_id: e.data.agentId, attached_position: String(e.globalPosition), attached_order: sortableCheckpoint(e.checkpoint), revision }).execute();
        return;
      case 'NumberDetached':
        await row.set({ agent_id: null, attached_position: null, attached_order: null, revision }).execute();
        return;
      case 'NumberSipTrunkAssigned':
        await row.set({ sip_trunk_id: e.data.sipTrunkId, revision }).execute();
        return;
      case 'NumberReleased':
        await row.set({ status: 'released', agent_id: null, attached_position: null, attached_order: null, sip_trunk_id: null, released_at: e.data.releasedAt, revision }).execute();
        return;
      case 'NumberRenewed':
        await row.set({ paid_through: e.data.paidThrough, renewal_status: 'ok', revision }).execute();
        return;
      case 'NumberRenewalPaymentFailed':
        await row.set({ renewal_status: 'payment_failed', revision }).execute();
        return;
      default:
        assertNever(e);
    }
  },
};

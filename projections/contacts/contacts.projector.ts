import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { ContactEvent } from '../../domain/contact/contact.decider.js';
import { guardedRow } from '../shared/guarded.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import type { ContactsTable } from './tables.js';

const contact = guardedRow(
  (db) => db.updateTable('contacts'),
  (e: RecordedEvent<ContactEvent>) => ({ contact_id: e.data.contactId }),
);

/**
 * `contacts`: one row per contact that was created. A deleted contact keeps its row with `deleted_at` set (the
 * queries never show it), so that the revision stored on the row keeps every replay a no-op.
 */
export const contactsProjector = defineProjector<ContactEvent>({
  name: 'contacts_v1',
  // it only writes: a batch's writes and its checkpoint go as one message (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['contacts'],
  on: {
    async ContactCreated(db, e) {
      const row = {
        account_id: e.data.accountId,
        contact_id: e.data.contactId,
        phone_number: e.data.phoneNumber,
        name: e.data.name,
        email: e.data.email,
        notes: e.data.notes,
        created_at: e.data.createdAt,
        updated_at: e.data.createdAt,
        deleted_at: null,
        revision: rowRevision(e),
      } satisfies ContactsTable;
      await db
        .insertInto('contacts')
        .values(row)
        .onConflict((oc) => oc.column('contact_id').doNothing())
        .execute();
    },
    async ContactUpdated(db, e) {
      const c = e.data.changes;
      await contact(db, e, {
        ...(c.phoneNumber !== undefined ? { phone_number: c.phoneNumber } : {}),
        ...(c.name !== undefined ? { name: c.name } : {}),
        ...(c.email !== undefined ? { email: c.email } : {}),
        ...(c.notes !== undefined ? { notes: c.notes } : {}),
        updated_at: e.data.updatedAt,
      });
    },
    ContactDeleted: (db, e) => contact(db, e, { deleted_at: e.data.deletedAt, updated_at: e.data.deletedAt }),
    // a contact that was never created has no row
    async ContactAbandoned() {},
  },
});

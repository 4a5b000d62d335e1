import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { RegistrationEvent } from '../../domain/registration/registration.decider.js';
import { guardedRow } from '../shared/guarded.js';
import { defineProjector, rowRevision } from '../shared/projector.js';

/** The account's row, guarded: matches only while the row reflects an older revision of the stream. */
const row = guardedRow(
  (db) => db.updateTable('registrations'),
  (e: RecordedEvent<RegistrationEvent>) => ({ account_id: e.data.accountId }),
);

/**
 * `registrations`: one row per account with a registration, its latest submission and status. The status the
 * API answers is read from the event store; this table is the sandbox review's queue of pending registrations.
 */
export const registrationsProjector = defineProjector<RegistrationEvent>({
  name: 'registrations_v1',
  // it only writes: a batch's writes and its checkpoint go as one message (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['registrations'],
  on: {
    async RegistrationSubmitted(db, e) {
      const values = {
        status: 'pending',
        submission: e.data.submission,
        registration_type: e.data.details.registrationType,
        submitted_at: e.data.submittedAt,
        decided_at: null,
        revision: rowRevision(e),
      };
      await db
        .insertInto('registrations')
        .values({ account_id: e.data.accountId, ...values })
        .onConflict((oc) => oc.column('account_id').doUpdateSet(values).where('registrations.revision', '<', rowRevision(e)))
        .execute();
    },
    RegistrationApproved: (db, e) => row(db, e, { status: 'approved', decided_at: e.data.approvedAt }),
    RegistrationRejected: (db, e) => row(db, e, { status: 'rejected', decided_at: e.data.rejectedAt }),
  },
});

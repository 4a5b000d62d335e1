import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { RegistrationEvent } from '../../domain/registration/registration.decider.js';
import { guarded } from '../shared/guarded.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';

/** The account's row, guarded: matches only while the row reflects an older revision of the stream. */
const row = (db: Kysely<ReadDb>, e: RecordedEvent<RegistrationEvent>) =>
  guarded(db.updateTable('registrations'), { account_id: e.data.accountId }, e);

/**
 * `registrations`: one row per account with a registration, its latest submission and status. The status the
 * API answers is read from the event store; this table is the sandbox review's queue of pending registrations.
 */
export const registrationsProjector = defineProjector<RegistrationEvent>({
  name: 'registrations_v1',
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
    async RegistrationApproved(db, e) {
      await row(db, e)
        .set({ status: 'approved', decided_at: e.data.approvedAt, revision: rowRevision(e) })
        .execute();
    },
    async RegistrationRejected(db, e) {
      await row(db, e)
        .set({ status: 'rejected', decided_at: e.data.rejectedAt, revision: rowRevision(e) })
        .execute();
    },
  },
});

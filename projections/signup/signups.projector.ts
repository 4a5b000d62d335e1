import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { SignUpEvent } from '../../domain/signup/signup.decider.js';
import { guarded } from '../shared/guarded.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';

/** The sign-up row, guarded: matches only while the row reflects an older revision of the stream. */
const signup = (db: Kysely<ReadDb>, e: RecordedEvent<SignUpEvent>) =>
  guarded(db.updateTable('signups'), { verification_id: e.data.verificationId }, e);

/** One row per sign-up process: what the throttles count and what recovery resumes. No codes, no keys. */
export const signupsProjector = defineProjector<SignUpEvent>({
  name: 'signups_v1',
  tables: ['signups'],
  on: {
    async SignUpRequested(db, e) {
      await db
        .insertInto('signups')
        .values({
          verification_id: e.data.verificationId,
          email: e.data.email,
          client_address: e.data.clientAddress,
          status: 'pending',
          account_id: null,
          requested_at: e.data.requestedAt,
          updated_at: e.data.requestedAt,
          revision: rowRevision(e),
        })
        .onConflict((oc) => oc.column('verification_id').doNothing())
        .execute();
    },
    async SignUpCodeRejected(db, e) {
      await signup(db, e)
        .set({ updated_at: e.data.rejectedAt, revision: rowRevision(e) })
        .execute();
    },
    async SignUpVerified(db, e) {
      await signup(db, e)
        .set({ status: 'verified', account_id: e.data.plan.accountId, updated_at: e.data.verifiedAt, revision: rowRevision(e) })
        .execute();
    },
    async SignUpCompleted(db, e) {
      await signup(db, e)
        .set({ status: 'completed', updated_at: e.data.completedAt, revision: rowRevision(e) })
        .execute();
    },
    async SignUpKeyReplaced(db, e) {
      await signup(db, e)
        .set({ updated_at: e.data.replacedAt, revision: rowRevision(e) })
        .execute();
    },
    async SignUpStepFailed(db, e) {
      await signup(db, e)
        .set({ updated_at: e.data.failedAt, revision: rowRevision(e) })
        .execute();
    },
    async SignUpRetryRequested(db, e) {
      await signup(db, e)
        .set({ updated_at: e.data.requestedAt, revision: rowRevision(e) })
        .execute();
    },
    async SignUpKeyDelivered(db, e) {
      await signup(db, e)
        .set({ updated_at: e.data.deliveredAt, revision: rowRevision(e) })
        .execute();
    },
    async SignUpFailed(db, e) {
      await signup(db, e)
        .set({ status: 'failed', updated_at: e.data.failedAt, revision: rowRevision(e) })
        .execute();
    },
  },
});

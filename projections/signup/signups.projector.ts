import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { SignUpEvent } from '../../domain/signup/signup.decider.js';
import { guardedRow } from '../shared/guarded.js';
import { defineProjector, rowRevision } from '../shared/projector.js';

/** The sign-up row, guarded: matches only while the row reflects an older revision of the stream. */
const signup = guardedRow(
  (db) => db.updateTable('signups'),
  (e: RecordedEvent<SignUpEvent>) => ({ verification_id: e.data.verificationId }),
);

/** One row per sign-up process: what the throttles count and what recovery resumes. No codes, no keys. */
export const signupsProjector = defineProjector<SignUpEvent>({
  name: 'signups_v1',
  // it only writes: a batch's writes and its checkpoint go as one message (docs/event-store.md#pipelined-batches)
  pipelined: true,
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
    SignUpCodeRejected: (db, e) => signup(db, e, { updated_at: e.data.rejectedAt }),
    SignUpVerified: (db, e) => signup(db, e, { status: 'verified', account_id: e.data.plan.accountId, updated_at: e.data.verifiedAt }),
    SignUpCompleted: (db, e) => signup(db, e, { status: 'completed', updated_at: e.data.completedAt }),
    SignUpKeyReplaced: (db, e) => signup(db, e, { updated_at: e.data.replacedAt }),
    SignUpStepFailed: (db, e) => signup(db, e, { updated_at: e.data.failedAt }),
    SignUpRetryRequested: (db, e) => signup(db, e, { updated_at: e.data.requestedAt }),
    SignUpKeyDelivered: (db, e) => signup(db, e, { updated_at: e.data.deliveredAt }),
    SignUpFailed: (db, e) => signup(db, e, { status: 'failed', updated_at: e.data.failedAt }),
  },
});

import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../application/ports/event-store.port.js';
import { signUpEventTypes, type SignUpEvent } from '../domain/signup/signup.decider.js';
import { assertNever } from '../domain/shared/types.js';
import { alreadyApplied, type Projector } from './shared/projector.js';
import type { ReadDb } from './shared/read-db.js';

/** One row per sign-up process: what the throttles count and what recovery resumes. No codes, no keys. */
export const signupsProjector: Projector = {
  name: 'signups_v1',
  handles: new Set<string>(signUpEventTypes),
  tables: ['signups'],
  async apply(db: Kysely<ReadDb>, raw: RecordedEvent) {
    const e = raw as unknown as RecordedEvent<SignUpEvent>;
    const revision = String(e.streamRevision);
    const id = e.data.verificationId;
    if (e.type === 'SignUpRequested') {
      await db.insertInto('signups').values({
        verification_id: id, email: e.data.email, client_address: e.data.clientAddress, status: 'pending', account_id: null,
        requested_at: e.data.requestedAt, updated_at: e.data.requestedAt, revision,
      }).onConflict((oc) => oc.column('verification_id').doNothing()).execute();
      return;
    }
    const row = await db.selectFrom('signups').select('revision').where('verification_id', '=', id).executeTakeFirst();
    if (!row || alreadyApplied(row.revision, e)) return;
    const upd = db.updateTable('signups').where('verification_id', '=', id);
    switch (e.type) {
      case 'SignUpCodeRejected':
        await upd.set({ updated_at: e.data.rejectedAt, revision }).execute();
        return;
      case 'SignUpVerified':
        await upd.set({ status: 'verified', account_id: e.data.plan.accountId, updated_at: e.data.verifiedAt, revision }).execute();
        return;
      case 'SignUpCompleted':
        await upd.set({ status: 'completed', updated_at: e.data.completedAt, revision }).execute();
        return;
      case 'SignUpKeyReplaced':
        await upd.set({ updated_at: e.data.replacedAt, revision }).execute();
        return;
      case 'SignUpFailed':
        await upd.set({ status: 'failed', updated_at: e.data.failedAt, revision }).execute();
        return;
      default:
        assertNever(e);
    }
  },
};

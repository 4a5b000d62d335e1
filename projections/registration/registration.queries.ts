import type { Kysely } from 'kysely';
import type { PendingRegistration, RegistrationQueries } from '../../application/registration/registration-queries.port.js';
import type { ReadDb } from '../shared/read-db.js';

const iso = (v: Date | string) => new Date(v).toISOString();

export class KyselyRegistrationQueries implements RegistrationQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async pendingSubmittedBy(submittedAtOrBefore: string, limit: number): Promise<readonly PendingRegistration[]> {
    const rows = await this.db
      .selectFrom('registrations')
      .select(['account_id', 'submission', 'submitted_at'])
      .where('status', '=', 'pending')
      .where('submitted_at', '<=', submittedAtOrBefore)
      .orderBy('submitted_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ accountId: r.account_id, submission: Number(r.submission), submittedAt: iso(r.submitted_at) }));
  }
}

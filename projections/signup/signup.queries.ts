import type { Kysely } from 'kysely';
import type { ReadDb } from '../shared/read-db.js';

export interface SignUpQueries {
  /** sign-ups requested since `since` by this e-mail address / client address, and the oldest of them */
  recentByEmail(email: string, since: Date): Promise<{ count: number; oldest: Date | null }>;
  recentByClient(clientAddress: string, since: Date): Promise<{ count: number; oldest: Date | null }>;
  /** verified sign-ups whose provisioning has not completed, last touched before `before` */
  stalled(before: Date, limit: number): Promise<string[]>;
  outbox(email: string, limit: number): Promise<{ subject: string; body: string; sentAt: string }[]>;
}

export class KyselySignUpQueries implements SignUpQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  private async recent(column: 'email' | 'client_address', value: string, since: Date) {
    const r = await this.db
      .selectFrom('signups')
      .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.min('requested_at').as('oldest')])
      .where(column, '=', value)
      .where('requested_at', '>=', since)
      .executeTakeFirstOrThrow();
    return { count: Number(r.n), oldest: r.oldest ? new Date(r.oldest as string | Date) : null };
  }

  recentByEmail(email: string, since: Date) {
    return this.recent('email', email, since);
  }
  recentByClient(clientAddress: string, since: Date) {
    return this.recent('client_address', clientAddress, since);
  }

  async stalled(before: Date, limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('signups')
      .select('verification_id')
      .where('status', '=', 'verified')
      .where('updated_at', '<', before)
      .orderBy('updated_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.verification_id);
  }

  async outbox(email: string, limit: number) {
    const rows = await this.db
      .selectFrom('sandbox_outbox')
      .select(['subject', 'body', 'sent_at'])
      .where('to_address', '=', email.toLowerCase())
      .orderBy('sent_at', 'desc')
      .orderBy('message_id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ subject: r.subject, body: r.body, sentAt: new Date(r.sent_at).toISOString() }));
  }
}

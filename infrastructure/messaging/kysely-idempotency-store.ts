import { inject, injectable } from 'inversify';
import type { Kysely } from 'kysely';
import type { ClaimResult, IdempotencyStorePort, StoredAnswer } from '../../application/messaging/idempotency.port.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import '../../projections/messaging/tables.js';
import { PLATFORM } from '../platform/tokens.js';

/**
 * Idempotency-Key claims and answers in `idempotency_keys` (docs/messaging.md#idempotency-keys). A claim is one
 * insert that either takes the key or finds the row already there; a row older than 24 hours is taken over.
 */
@injectable()
export class KyselyIdempotencyStore implements IdempotencyStorePort {
  constructor(@inject(PLATFORM.ReadDb) private readonly db: Kysely<ReadDb>) {}

  async claim(o: { accountId: string; key: string; requestHash: string; now: string; since: string }): Promise<ClaimResult> {
    const taken = await this.db
      .insertInto('idempotency_keys')
      .values({ account_id: o.accountId, key: o.key, request_hash: o.requestHash, status: null, answer: null, created_at: o.now })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'key'])
          .doUpdateSet({ request_hash: o.requestHash, status: null, answer: null, created_at: o.now })
          .where('idempotency_keys.created_at', '<', o.since),
      )
      .returning('key')
      .executeTakeFirst();
    if (taken) return { kind: 'claimed' };
    const row = await this.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('account_id', '=', o.accountId)
      .where('key', '=', o.key)
      .executeTakeFirst();
    if (!row) return this.claim(o); // released between the insert and the read
    if (row.status === null) return { kind: 'in_progress', requestHash: row.request_hash };
    const answer = (typeof row.answer === 'string' ? JSON.parse(row.answer) : row.answer) as StoredAnswer['body'];
    return { kind: 'answered', requestHash: row.request_hash, answer: { status: row.status, body: answer } };
  }

  async complete(o: { accountId: string; key: string; answer: StoredAnswer }): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ status: o.answer.status, answer: JSON.stringify(o.answer.body) })
      .where('account_id', '=', o.accountId)
      .where('key', '=', o.key)
      .execute();
  }

  async release(o: { accountId: string; key: string }): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('account_id', '=', o.accountId)
      .where('key', '=', o.key)
      .where('status', 'is', null)
      .execute();
  }

  /** forgets answers older than `before` (run by the messaging housekeeping) */
  async expire(before: string): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('created_at', '<', before).execute();
  }
}

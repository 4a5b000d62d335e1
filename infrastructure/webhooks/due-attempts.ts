import { type Kysely, sql } from 'kysely';
import type { ClaimedAttempt, DueAttemptsPort } from '../../application/webhooks/webhook.port.js';
import type { ReadDb } from '../../projections/shared/read-db.js';

/**
 * Claims due attempts from the retry timeline in one short statement: rows due now and not under a live
 * lease are locked with `FOR UPDATE SKIP LOCKED` (a row another worker is claiming is skipped, not waited
 * for) and given this worker's lease. The claim and lease live on the timeline row itself, so a competing
 * claim that waited on the row re-checks the lease it just got and skips it. Nothing else happens inside the
 * transaction: the POST and the outcome come after the commit. The rows are chosen once, in a materialized CTE:
 * as a subquery joined to the UPDATE it may be scanned again per row, each scan taking the next unleased rows,
 * so one claim took more than its limit (more sends at once than the worker's concurrency).
 */
export class KyselyDueAttempts implements DueAttemptsPort {
  constructor(private readonly db: Kysely<ReadDb>) {}

  /**
   * Sets an attempt aside for good (docs/operations.md#isolated-work): its row keeps a claim that never expires, so
   * no worker takes it again; `isolated_work` says why. Rebuilding the timeline puts it back.
   */
  async park(deliveryId: string, attempt: number, by: string): Promise<void> {
    await sql`update webhook_due_attempts set claimed_by = ${`isolated:${by}`}, claimed_until = 'infinity'::timestamptz
              where delivery_id = ${deliveryId} and attempt = ${attempt}`.execute(this.db);
  }

  async claim(o: { now: Date; limit: number; workerId: string; leaseMs: number }): Promise<ClaimedAttempt[]> {
    if (o.limit <= 0) return [];
    const now = o.now.toISOString();
    const until = new Date(o.now.getTime() + o.leaseMs).toISOString();
    const r = await sql<{ delivery_id: string; account_id: string; attempt: number; claimed_until: Date | string }>`
      with due as materialized (
        select delivery_id from webhook_due_attempts
         where due_at <= ${now}::timestamptz
           and (claimed_until is null or claimed_until <= ${now}::timestamptz)
         order by due_at
         limit ${o.limit}
         for update skip locked
      )
      update webhook_due_attempts d
         set claimed_by = ${o.workerId}, claimed_until = ${until}::timestamptz
        from due
       where d.delivery_id = due.delivery_id
         and (d.claimed_until is null or d.claimed_until <= ${now}::timestamptz)
      returning d.delivery_id, d.account_id, d.attempt, d.claimed_until`.execute(this.db);
    return r.rows.map((x) => ({
      deliveryId: x.delivery_id,
      accountId: x.account_id,
      attempt: x.attempt,
      claimedUntil: new Date(x.claimed_until).toISOString(),
    }));
  }
}

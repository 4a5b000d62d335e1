import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { inject, injectable } from 'inversify';
import { type Kysely, sql } from 'kysely';
import type { SmsCarrierEventsPort, SmsReceipt } from '../../../application/messaging/sms-carrier.port.js';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { LoggerPort } from '../../../application/ports/logger.port.js';
import { PLATFORM } from '../../platform/tokens.js';
import { IntervalWorker } from '../../workers.js';
import type { SandboxSmsDb } from './sandbox-sms-db.js';

export type ClaimedReceipt = SmsReceipt & Readonly<{ copy: number; attempts: number }>;

/**
 * The sandbox carrier's receipts still to report, as a timeline of rows due on the Clock. A claim locks the due
 * rows no live lease holds (`FOR UPDATE SKIP LOCKED`: a row another worker is claiming is skipped, not waited
 * for) and leases them to one worker; the report comes after the claim's commit. The rows to take are chosen
 * once, in a materialized CTE: as a subquery joined to the UPDATE, PostgreSQL may scan it again for each row,
 * and every scan after the first skips the rows just leased and takes the next ones, past the limit and out of
 * due order. A worker that dies between
 * the claim and the report leaves the lease to expire, and the receipt is reported again (at least once).
 * A message's receipts are reported one after another in due order: only the earliest unreported receipt of a
 * message can be claimed, so two workers never report a message's `delivered` before its `sent` (a report that
 * failed falls due again later, and the receipts due before its retry go first; docs/sandbox.md#sms-receipts).
 */
@injectable()
export class SandboxSmsReceipts {
  private readonly db: Kysely<SandboxSmsDb>;

  constructor(@inject(PLATFORM.ReadDb) db: Kysely<unknown>) {
    this.db = db as Kysely<SandboxSmsDb>;
  }

  async claim(o: { now: Date; limit: number; workerId: string; leaseMs: number }): Promise<ClaimedReceipt[]> {
    if (o.limit <= 0) return [];
    const now = o.now.toISOString();
    const until = new Date(o.now.getTime() + o.leaseMs).toISOString();
    const r = await sql<{
      receipt_id: string;
      copy: number;
      carrier_message_id: string;
      status: SmsReceipt['status'];
      failure_reason: string | null;
      error_code: string | null;
      happened_at: Date | string;
      due_at: Date | string;
      attempts: number;
    }>`
      with due as materialized (
        select receipt_id, copy from sandbox_sms_receipts s
         where reported_at is null
           and due_at <= ${now}::timestamptz
           and (claimed_until is null or claimed_until <= ${now}::timestamptz)
           and not exists (
             select 1 from sandbox_sms_receipts e
              where e.carrier_message_id = s.carrier_message_id and e.reported_at is null
                and (e.due_at, e.receipt_id, e.copy) < (s.due_at, s.receipt_id, s.copy))
         order by due_at, receipt_id, copy
         limit ${o.limit}
         for update skip locked
      )
      update sandbox_sms_receipts r
         set claimed_by = ${o.workerId}, claimed_until = ${until}::timestamptz
        from due
       where r.receipt_id = due.receipt_id and r.copy = due.copy
         and r.reported_at is null
         and (r.claimed_until is null or r.claimed_until <= ${now}::timestamptz)
      returning r.receipt_id, r.copy, r.carrier_message_id, r.status, r.failure_reason, r.error_code, r.happened_at, r.due_at, r.attempts`.execute(
      this.db,
    );
    return r.rows
      .sort((a, b) => +new Date(a.due_at) - +new Date(b.due_at) || a.receipt_id.localeCompare(b.receipt_id) || a.copy - b.copy)
      .map((x) => ({
        carrierMessageId: x.carrier_message_id,
        receiptId: x.receipt_id,
        status: x.status,
        failureReason: x.failure_reason,
        errorCode: x.error_code,
        at: new Date(x.happened_at).toISOString(),
        copy: x.copy,
        attempts: x.attempts,
      }));
  }

  /** The messaging side took the receipt: it is never reported again (unless this worker's lease was lost). */
  async reported(c: ClaimedReceipt, workerId: string, now: Date): Promise<void> {
    await this.db
      .updateTable('sandbox_sms_receipts')
      .set({ reported_at: now.toISOString(), claimed_until: null })
      .where('receipt_id', '=', c.receiptId)
      .where('copy', '=', c.copy)
      .where('claimed_by', '=', workerId)
      .execute();
  }

  /** The report failed: try again at `retryAt`. */
  async failed(c: ClaimedReceipt, workerId: string, retryAt: Date, error: string): Promise<void> {
    await this.db
      .updateTable('sandbox_sms_receipts')
      .set({
        due_at: retryAt.toISOString(),
        claimed_by: null,
        claimed_until: null,
        attempts: c.attempts + 1,
        last_error: error.slice(0, 500),
      })
      .where('receipt_id', '=', c.receiptId)
      .where('copy', '=', c.copy)
      .where('claimed_by', '=', workerId)
      .where('reported_at', 'is', null)
      .execute();
  }
}

export type ReceiptWorkerOptions = Readonly<{
  /** how often to look for due receipts */
  pollIntervalMs: number;
  /** how long a claim keeps other workers off a receipt (Clock time) */
  leaseMs: number;
  /** receipts claimed at once */
  batchSize?: number;
  workerId?: string;
}>;

/** Retry of a failed report: 1 s, 2 s, 4 s, … up to a minute (Clock time). */
export const reportRetryDelayMs = (attempts: number): number => Math.min(1000 * 2 ** attempts, 60_000);

/**
 * Reports the sandbox carrier's due receipts to the messaging side (`SmsCarrierEventsPort.receipt`), in the
 * order they fall due. The events port is looked up at each report, so it is whatever the messaging capability
 * bound; until something is bound, reports fail and are retried. Any number of these may run.
 */
export class SandboxSmsReceiptWorker extends IntervalWorker<number> {
  readonly name = 'sandbox-sms-receipts';
  readonly workerId: string;

  constructor(
    private readonly receipts: SandboxSmsReceipts,
    private readonly events: () => SmsCarrierEventsPort,
    private readonly clock: ClockPort,
    log: LoggerPort,
    private readonly o: ReceiptWorkerOptions,
  ) {
    super(log, o.pollIntervalMs);
    this.workerId = o.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  }

  /** Claims and reports every receipt due now; returns how many were reported. */
  async runOnce(): Promise<number> {
    let n = 0;
    for (;;) {
      const claimed = await this.receipts.claim({
        now: this.clock.now(),
        limit: this.o.batchSize ?? 50,
        workerId: this.workerId,
        leaseMs: this.o.leaseMs,
      });
      if (claimed.length === 0) return n;
      for (const c of claimed) if (await this.report(c)) n++;
    }
  }

  private async report(c: ClaimedReceipt): Promise<boolean> {
    const { copy: _copy, attempts: _attempts, ...receipt } = c;
    try {
      await this.events().receipt(receipt);
    } catch (err) {
      this.log.warn({ err, receiptId: c.receiptId }, 'sandbox SMS receipt not taken; reported again later');
      const retryAt = new Date(this.clock.now().getTime() + reportRetryDelayMs(c.attempts));
      await this.receipts.failed(c, this.workerId, retryAt, err instanceof Error ? err.message : String(err));
      return false;
    }
    await this.receipts.reported(c, this.workerId, this.clock.now());
    return true;
  }
}

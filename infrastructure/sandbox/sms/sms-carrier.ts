import { type Kysely, sql, type Transaction } from 'kysely';
import type { InboundMessage } from '../../../application/messaging/delivery/transport.port.js';
import {
  type OutboundSms,
  type SmsCarrierPort,
  SmsSubmissionError,
  type SubmittedSms,
} from '../../../application/messaging/sms-carrier.port.js';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { IdsPort } from '../../../application/ports/ids.port.js';
import { type FailureCode, failureText } from '../../../domain/message/failure-reasons.js';
import type { ReadDb } from '../../../projections/shared/read-db.js';
import { sandboxLineInfo } from '../carrier/sandbox-carrier.js';
import { iso, isoOrNull } from '../shared/rows.js';
import { SandboxUpstream } from '../shared/upstream.js';
import type { SandboxSmsDb, SandboxSmsReceiptsTable, SandboxSmsSubmissionsTable } from './db.js';
import { failureReceipts, type Plan, type PlannedReceipt, planFor, type Timing } from './magic.js';

export type SandboxSmsMessage = Readonly<{
  carrierMessageId: string;
  idempotencyKey: string;
  accountId: string;
  from: string;
  to: string;
  body: string;
  mediaUrls: string[];
  /** accepted | refused | lost (a first attempt that failed before anything was sent) */
  status: string;
  failureReason: string | null;
  errorCode: string | null;
  rateLimited: boolean;
  submittedAt: string;
  receipts: {
    receiptId: string;
    copy: number;
    status: string;
    failureReason: string | null;
    errorCode: string | null;
    at: string;
    dueAt: string;
    reportedAt: string | null;
  }[];
}>;

const RATE_WINDOW_MS = 60_000;

/**
 * The messaging side of the sandbox carrier (docs/sandbox.md, "Messaging"): it takes texts and later reports
 * what became of them, like a real carrier: asynchronously, sometimes late, twice or out of order, and with
 * failures chosen by the recipient's number (magic.ts). A submission is idempotent by its key. The
 * receipts are rows due at a time on the Clock, reported by a ReportWorker (receipts.ts); nothing waits on a timer
 * here. Each sending number may submit `ratePerMinute` texts a minute; above it, texts fail with the
 * rate-limited reason (the count is not locked: concurrent
 * submissions from one number may let a few more through, as a real carrier's window may).
 */
export class SandboxSmsCarrier extends SandboxUpstream<SandboxSmsDb> implements SmsCarrierPort {
  constructor(
    db: Kysely<ReadDb>,
    clock: ClockPort,
    private readonly ids: IdsPort,
    private readonly o: Readonly<{ timing: Timing; ratePerMinute: number; registerUrl: string }>,
  ) {
    super(db, clock);
  }

  async submit(m: OutboundSms): Promise<SubmittedSms> {
    // a lost race on the key (another process submitted it at the same moment) answers what that one stored
    for (let attempt = 0; attempt < 3; attempt++) {
      // a new key is the usual case: the first attempt stores it straight away, and a key stored before is found
      // by its conflict, then answered as it was the first time
      const existing = attempt === 0 ? undefined : await this.find(m.idempotencyKey);
      if (existing) {
        const answered = await this.again(existing);
        if (answered) return answered;
        continue;
      }
      const plan = planFor(m.to, this.o.timing);
      if (plan.kind === 'refuse') {
        const reason = this.text(plan.failureCode, m.to);
        if (!(await this.insert(this.db, m, { status: 'refused', failure_reason: reason, error_code: plan.failureCode }))) continue;
        throw new SmsSubmissionError(reason, plan.failureCode);
      }
      if (plan.lost === 'before') {
        if (!(await this.insert(this.db, m, { status: 'lost' }))) continue;
        throw new Error('sandbox SMS carrier: no answer to the submission (nothing was sent; submitting again with the key is safe)');
      }
      const id = await this.accept(m, plan.receipts);
      if (id === null) continue;
      if (plan.lost === 'after')
        throw new Error('sandbox SMS carrier: no answer to the submission (it may have been sent; submit again with the key)');
      return { carrierMessageId: id };
    }
    throw new Error(`sandbox SMS carrier: the submission ${m.idempotencyKey} kept racing another one`);
  }

  /** Answers a key submitted before: the first result, sending nothing again (a `lost` first attempt is accepted now). */
  private async again(row: SandboxSmsSubmissionsTable): Promise<SubmittedSms | null> {
    if (row.status === 'accepted') return { carrierMessageId: row.carrier_message_id };
    if (row.status === 'refused') throw new SmsSubmissionError(row.failure_reason ?? '', row.error_code);
    const plan = planFor(row.to_number, this.o.timing) as Extract<Plan, { kind: 'accept' }>;
    const accepted = await this.db.transaction().execute(async (trx) => {
      const rateLimited = await this.overRate(trx, row.from_number);
      const r = await trx
        .updateTable('sandbox_sms_submissions')
        .set({ status: 'accepted', accepted_at: this.now().toISOString(), rate_limited: rateLimited })
        .where('idempotency_key', '=', row.idempotency_key)
        .where('status', '=', 'lost')
        .executeTakeFirst();
      if (r.numUpdatedRows === 0n) return false;
      await this.schedule(
        trx,
        row.carrier_message_id,
        row.to_number,
        rateLimited ? failureReceipts('RATE_LIMITED', this.o.timing) : plan.receipts,
      );
      return true;
    });
    return accepted ? { carrierMessageId: row.carrier_message_id } : null;
  }

  private find(key: string): Promise<SandboxSmsSubmissionsTable | undefined> {
    return this.db.selectFrom('sandbox_sms_submissions').selectAll().where('idempotency_key', '=', key).executeTakeFirst();
  }

  /** Stores a new submission; false when the key was taken meanwhile. */
  private async insert(
    db: Kysely<ReadDb & SandboxSmsDb>,
    m: OutboundSms,
    o: { status: string; failure_reason?: string; error_code?: string; rate_limited?: boolean; carrier_message_id?: string },
  ): Promise<boolean> {
    const now = this.now().toISOString();
    const r = await db
      .insertInto('sandbox_sms_submissions')
      .values({
        idempotency_key: m.idempotencyKey,
        carrier_message_id: o.carrier_message_id ?? this.ids.id('sm'),
        account_id: m.accountId,
        from_number: m.from,
        to_number: m.to,
        body: m.body,
        media_urls: JSON.stringify(m.mediaUrls),
        status: o.status,
        failure_reason: o.failure_reason ?? null,
        error_code: o.error_code ?? null,
        rate_limited: o.rate_limited ?? false,
        submitted_at: now,
        accepted_at: o.status === 'accepted' ? now : null,
      })
      .onConflict((oc) => oc.column('idempotency_key').doNothing())
      .returning('idempotency_key')
      .executeTakeFirst();
    return r !== undefined;
  }

  /**
   * Takes the text and schedules its receipts in one statement (one statement is one transaction): whether the
   * sending number is over its rate, the submission, and the receipts of that outcome (the planned ones, or the
   * rate limit's failure); null when the key was taken before.
   */
  private async accept(m: OutboundSms, receipts: readonly PlannedReceipt[]): Promise<string | null> {
    const id = this.ids.id('sm');
    const now = this.now().toISOString();
    const since = new Date(this.now().getTime() - RATE_WINDOW_MS).toISOString();
    const planned = [
      ...this.receiptRows(id, m.to, receipts).map((r) => ({ ...r, limited: false })),
      ...this.receiptRows(id, m.to, failureReceipts('RATE_LIMITED', this.o.timing)).map((r) => ({ ...r, limited: true })),
    ];
    const r = await sql<{ carrier_message_id: string }>`
      with rate as (
        select count(*) >= ${this.o.ratePerMinute} as limited from sandbox_sms_submissions
         where from_number = ${m.from} and accepted_at > ${since}::timestamptz and rate_limited = false
      ), taken as (
        insert into sandbox_sms_submissions (idempotency_key, carrier_message_id, account_id, from_number, to_number, body,
            media_urls, status, rate_limited, submitted_at, accepted_at)
        select ${m.idempotencyKey}, ${id}, ${m.accountId}, ${m.from}, ${m.to}, ${m.body}, ${JSON.stringify(m.mediaUrls)}::jsonb,
               'accepted', rate.limited, ${now}::timestamptz, ${now}::timestamptz from rate
        on conflict (idempotency_key) do nothing
        returning carrier_message_id, rate_limited
      ), receipts as (
        insert into sandbox_sms_receipts (receipt_id, copy, carrier_message_id, status, failure_reason, error_code, happened_at, due_at)
        select p.receipt_id, p.copy, taken.carrier_message_id, p.status, p.failure_reason, p.error_code, p.happened_at, p.due_at
          from taken join jsonb_to_recordset(${JSON.stringify(planned)}::jsonb) as p(limited boolean, receipt_id text, copy smallint,
               status text, failure_reason text, error_code text, happened_at timestamptz, due_at timestamptz)
            on p.limited = taken.rate_limited
      )
      select carrier_message_id from taken`.execute(this.db);
    return r.rows[0]?.carrier_message_id ?? null;
  }

  /** Whether the sending number has used up its texts of the last minute (rate-limited ones do not count). */
  private async overRate(trx: Transaction<ReadDb & SandboxSmsDb>, from: string): Promise<boolean> {
    const since = new Date(this.now().getTime() - RATE_WINDOW_MS).toISOString();
    const r = await trx
      .selectFrom('sandbox_sms_submissions')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('from_number', '=', from)
      .where('accepted_at', '>', since)
      .where('rate_limited', '=', false)
      .executeTakeFirstOrThrow();
    return Number(r.n) >= this.o.ratePerMinute;
  }

  private async schedule(
    trx: Transaction<ReadDb & SandboxSmsDb>,
    carrierMessageId: string,
    to: string,
    receipts: readonly PlannedReceipt[],
  ) {
    const rows = this.receiptRows(carrierMessageId, to, receipts);
    if (rows.length) await trx.insertInto('sandbox_sms_receipts').values(rows).execute();
  }

  /** The rows of a text's receipts: each due at its time on the Clock from now, a repeated one a moment after the first. */
  private receiptRows(carrierMessageId: string, to: string, receipts: readonly PlannedReceipt[]): SandboxSmsReceiptsTable[] {
    const now = this.now().getTime();
    return receipts.flatMap((r) => {
      const receiptId = this.ids.id('rcpt');
      const failureReason = r.failureCode ? this.text(r.failureCode, to) : null;
      return Array.from({ length: r.copies }, (_, copy) => ({
        receipt_id: receiptId,
        copy,
        carrier_message_id: carrierMessageId,
        status: r.status,
        failure_reason: failureReason,
        error_code: r.failureCode,
        happened_at: new Date(now + r.happensAfterMs).toISOString(),
        // a repeated report comes a moment after the first
        due_at: new Date(now + r.arrivesAfterMs + copy).toISOString(),
        claimed_by: null,
        claimed_until: null,
        attempts: 0,
        last_error: null,
        reported_at: null,
      }));
    });
  }

  /** A reason's text for a text to `to`: the carrier named is the recipient's, the registration page the platform's. */
  private text(code: FailureCode, to: string): string {
    return failureText(code, { carrier: sandboxLineInfo(to).carrierName ?? 'Sandbox Wireless', registerUrl: this.o.registerUrl });
  }

  // --- the sandbox control API's view -------------------------------------------------------------------

  /** What the carrier was asked to send, newest first, with the receipts it reported or will report. */
  async messages(q: { to?: string | undefined; from?: string | undefined; limit: number }): Promise<SandboxSmsMessage[]> {
    let s = this.db.selectFrom('sandbox_sms_submissions').selectAll();
    if (q.to) s = s.where('to_number', '=', q.to);
    if (q.from) s = s.where('from_number', '=', q.from);
    const rows = await s.orderBy('submitted_at', 'desc').orderBy('carrier_message_id', 'desc').limit(q.limit).execute();
    const ids = rows.map((r) => r.carrier_message_id);
    const receipts = ids.length
      ? await this.db
          .selectFrom('sandbox_sms_receipts')
          .selectAll()
          .where('carrier_message_id', 'in', ids)
          .orderBy('due_at')
          .orderBy('receipt_id')
          .orderBy('copy')
          .execute()
      : [];
    return rows.map((r) => ({
      carrierMessageId: r.carrier_message_id,
      idempotencyKey: r.idempotency_key,
      accountId: r.account_id,
      from: r.from_number,
      to: r.to_number,
      body: r.body,
      mediaUrls: (typeof r.media_urls === 'string' ? JSON.parse(r.media_urls) : r.media_urls) as string[],
      status: r.status,
      failureReason: r.failure_reason,
      errorCode: r.error_code,
      rateLimited: r.rate_limited,
      submittedAt: iso(r.submitted_at),
      receipts: receipts
        .filter((x) => x.carrier_message_id === r.carrier_message_id)
        .map((x) => ({
          receiptId: x.receipt_id,
          copy: x.copy,
          status: x.status,
          failureReason: x.failure_reason,
          errorCode: x.error_code,
          at: iso(x.happened_at),
          dueAt: iso(x.due_at),
          reportedAt: isoOrNull(x.reported_at),
        })),
    }));
  }

  /** An inbound text as the carrier would report it (the sandbox's `POST /sandbox/inbound`). */
  inbound(m: Pick<InboundMessage, 'to' | 'from' | 'body' | 'mediaUrls' | 'group' | 'reaction'>): InboundMessage {
    return { ...m, channel: 'sms', providerMessageId: this.ids.id('sm'), receivedAt: this.now().toISOString() };
  }
}

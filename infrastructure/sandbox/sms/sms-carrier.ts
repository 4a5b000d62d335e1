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
import { perTurn } from '../../../application/shared/per-turn.js';
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

/** A text asked to be taken: its carrier id, when it was asked, and its receipts' rows (both outcomes of the rate). */
type Asked = Readonly<{ m: OutboundSms; id: string; at: string; planned: readonly (SandboxSmsReceiptsTable & { limited: boolean })[] }>;

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
   * Takes the text and schedules its receipts; null when the key was taken before. The texts asked for in one turn
   * of the event loop are taken in one statement (docs/sandbox.md#sms-submissions).
   */
  private async accept(m: OutboundSms, receipts: readonly PlannedReceipt[]): Promise<string | null> {
    const id = this.ids.id('sm');
    const planned = [
      ...this.receiptRows(id, m.to, receipts).map((r) => ({ ...r, limited: false })),
      ...this.receiptRows(id, m.to, failureReceipts('RATE_LIMITED', this.o.timing)).map((r) => ({ ...r, limited: true })),
    ];
    const taken = await this.acceptTogether([{ m, id, at: this.now().toISOString(), planned }]);
    return taken.get(m.idempotencyKey) ?? null;
  }

  private readonly acceptTogether = perTurn((asked: readonly Asked[]) => this.acceptAll(asked));

  /**
   * Takes texts and schedules their receipts in one statement (one statement is one transaction): for each, whether
   * its sending number is over its rate, counting the texts of the last minute and those before it in the statement;
   * the submission; and the receipts of that outcome (the planned ones, or the rate limit's failure). Answers the
   * carrier id of each key taken now; a key asked for twice is taken once, by its first text.
   */
  private async acceptAll(asked: readonly Asked[]): Promise<Map<string, string>> {
    const first = new Map<string, Asked>();
    for (const a of asked) if (!first.has(a.m.idempotencyKey)) first.set(a.m.idempotencyKey, a);
    const unique = [...first.values()];
    const texts = unique.map((a, ord) => ({
      ord,
      idempotency_key: a.m.idempotencyKey,
      carrier_message_id: a.id,
      account_id: a.m.accountId,
      from_number: a.m.from,
      to_number: a.m.to,
      body: a.m.body,
      media_urls: a.m.mediaUrls,
      at: a.at,
    }));
    const planned = unique.flatMap((a) => a.planned.map((p) => ({ ...p, idempotency_key: a.m.idempotencyKey })));
    const since = new Date(this.now().getTime() - RATE_WINDOW_MS).toISOString();
    const r = await sql<{ idempotency_key: string; carrier_message_id: string }>`
      with text as (
        select * from jsonb_to_recordset(${JSON.stringify(texts)}::jsonb) as t(ord int, idempotency_key text,
               carrier_message_id text, account_id text, from_number text, to_number text, body text, media_urls jsonb,
               at timestamptz)
      ), sent as (
        select f.from_number, count(x.idempotency_key) as n from (select distinct from_number from text) f
          left join sandbox_sms_submissions x
            on x.from_number = f.from_number and x.accepted_at > ${since}::timestamptz and x.rate_limited = false
         group by f.from_number
      ), rated as (
        select text.*, sent.n + row_number() over (partition by text.from_number order by text.ord) - 1 >= ${this.o.ratePerMinute} as limited
          from text join sent using (from_number)
      ), taken as (
        insert into sandbox_sms_submissions (idempotency_key, carrier_message_id, account_id, from_number, to_number, body,
            media_urls, status, rate_limited, submitted_at, accepted_at)
        select idempotency_key, carrier_message_id, account_id, from_number, to_number, body, media_urls, 'accepted', limited,
               at, at from rated order by ord
        on conflict (idempotency_key) do nothing
        returning idempotency_key, carrier_message_id, rate_limited
      ), receipts as (
        insert into sandbox_sms_receipts (receipt_id, copy, carrier_message_id, status, failure_reason, error_code, happened_at, due_at)
        select p.receipt_id, p.copy, taken.carrier_message_id, p.status, p.failure_reason, p.error_code, p.happened_at, p.due_at
          from taken join jsonb_to_recordset(${JSON.stringify(planned)}::jsonb) as p(idempotency_key text, limited boolean,
               receipt_id text, copy smallint, status text, failure_reason text, error_code text, happened_at timestamptz,
               due_at timestamptz)
            on p.idempotency_key = taken.idempotency_key and p.limited = taken.rate_limited
      )
      select idempotency_key, carrier_message_id from taken`.execute(this.db);
    return new Map(r.rows.map((x) => [x.idempotency_key, x.carrier_message_id]));
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

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { inject, injectable } from 'inversify';
import { type Kysely, sql } from 'kysely';
import type { ChatappEventsPort } from '../../../application/chatapp/chat-platform.port.js';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { LoggerPort } from '../../../application/ports/logger.port.js';
import { PLATFORM } from '../../platform/tokens.js';
import { reportRetryDelayMs } from '../../providers/sandbox/sandbox-sms-receipts.js';
import { IntervalWorker } from '../../workers.js';
import type { SandboxReport } from './sandbox-chat-platform.js';
import type { SandboxChatappDb } from './sandbox-chatapp-db.js';

export type ClaimedReport = Readonly<{ reportId: string; attempts: number; payload: SandboxReport }>;

/**
 * The sandbox chat platform's reports still to make (statuses of sent messages, template reviews), as a timeline of
 * rows due on the Clock. A claim locks due rows no live lease holds (`FOR UPDATE SKIP LOCKED`, chosen once in a
 * materialized CTE, as the sandbox SMS carrier's receipts are) and leases them to one worker; a worker that dies
 * leaves its lease to expire and the report is made again (at least once). Only a subject's earliest unmade
 * report can be claimed, so a message's statuses are made in order (docs/sandbox.md#sms-receipts).
 */
@injectable()
export class SandboxChatappReports {
  private readonly db: Kysely<SandboxChatappDb>;

  constructor(@inject(PLATFORM.ReadDb) db: Kysely<unknown>) {
    this.db = db as Kysely<SandboxChatappDb>;
  }

  async claim(o: { now: Date; limit: number; workerId: string; leaseMs: number }): Promise<ClaimedReport[]> {
    const now = o.now.toISOString();
    const until = new Date(o.now.getTime() + o.leaseMs).toISOString();
    const r = await sql<{ report_id: string; attempts: number; payload: unknown; due_at: Date | string }>`
      with due as materialized (
        select report_id from sandbox_chatapp_reports s
         where reported_at is null
           and due_at <= ${now}::timestamptz
           and (claimed_until is null or claimed_until <= ${now}::timestamptz)
           and not exists (
             select 1 from sandbox_chatapp_reports e
              where e.subject = s.subject and e.reported_at is null
                and (e.due_at, e.report_id) < (s.due_at, s.report_id))
         order by due_at, report_id
         limit ${o.limit}
         for update skip locked
      )
      update sandbox_chatapp_reports r
         set claimed_by = ${o.workerId}, claimed_until = ${until}::timestamptz
        from due
       where r.report_id = due.report_id
         and r.reported_at is null
         and (r.claimed_until is null or r.claimed_until <= ${now}::timestamptz)
      returning r.report_id, r.attempts, r.payload, r.due_at`.execute(this.db);
    return r.rows
      .sort((a, b) => +new Date(a.due_at) - +new Date(b.due_at) || a.report_id.localeCompare(b.report_id))
      .map((x) => ({
        reportId: x.report_id,
        attempts: x.attempts,
        payload: (typeof x.payload === 'string' ? JSON.parse(x.payload) : x.payload) as SandboxReport,
      }));
  }

  async reported(c: ClaimedReport, workerId: string, now: Date): Promise<void> {
    await this.db
      .updateTable('sandbox_chatapp_reports')
      .set({ reported_at: now.toISOString(), claimed_until: null })
      .where('report_id', '=', c.reportId)
      .where('claimed_by', '=', workerId)
      .execute();
  }

  async failed(c: ClaimedReport, workerId: string, retryAt: Date, error: string): Promise<void> {
    await this.db
      .updateTable('sandbox_chatapp_reports')
      .set({
        due_at: retryAt.toISOString(),
        claimed_by: null,
        claimed_until: null,
        attempts: c.attempts + 1,
        last_error: error.slice(0, 500),
      })
      .where('report_id', '=', c.reportId)
      .where('claimed_by', '=', workerId)
      .where('reported_at', 'is', null)
      .execute();
  }
}

/**
 * Makes the sandbox chat platform's due reports to the chat-app capability (`ChatappEventsPort`), in the order
 * they fall due; a report the capability could not take is made again later (1 s, 2 s, … up to a minute, on the
 * Clock). Any number of these may run.
 */
export class SandboxChatappReportWorker extends IntervalWorker<number> {
  readonly name = 'sandbox-chatapp-reports';
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

  constructor(
    private readonly reports: SandboxChatappReports,
    private readonly events: () => ChatappEventsPort,
    private readonly clock: ClockPort,
    log: LoggerPort,
    private readonly o: { pollIntervalMs: number; leaseMs: number },
  ) {
    super(log, o.pollIntervalMs);
  }

  async runOnce(): Promise<number> {
    let n = 0;
    for (;;) {
      const claimed = await this.reports.claim({ now: this.clock.now(), limit: 50, workerId: this.workerId, leaseMs: this.o.leaseMs });
      if (claimed.length === 0) return n;
      for (const c of claimed) if (await this.report(c)) n++;
    }
  }

  private async report(c: ClaimedReport): Promise<boolean> {
    const p = c.payload;
    try {
      if (p.kind === 'status') {
        const { kind: _k, ...status } = p;
        await this.events().status(status);
      } else await this.events().templateReviewed({ platformTemplateId: p.platformTemplateId, approved: p.approved, reason: p.reason });
    } catch (err) {
      this.log.warn({ err, reportId: c.reportId }, 'sandbox chat platform report not taken; made again later');
      const retryAt = new Date(this.clock.now().getTime() + reportRetryDelayMs(c.attempts));
      await this.reports.failed(c, this.workerId, retryAt, err instanceof Error ? err.message : String(err));
      return false;
    }
    await this.reports.reported(c, this.workerId, this.clock.now());
    return true;
  }
}

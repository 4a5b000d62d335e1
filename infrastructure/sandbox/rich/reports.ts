import type { QueryExecutorProvider } from 'kysely';
import { type ReportTable, ReportTimeline } from '../shared/reports.js';
import { iso } from '../shared/rows.js';
import type { SandboxRichDb } from './db.js';

type Row = SandboxRichDb['sandbox_rich_reports'];

/** A message's reports are made in order, `read` only once `delivered` is made (docs/sandbox.md#rich-reports). */
const REPORTS: ReportTable<Row> = { table: 'sandbox_rich_reports', key: ['report_id'], subject: 'message_id', keepsLastError: false };

export type RichReport = Readonly<{ reportId: string; messageId: string; providerMessageId: string; status: Row['status']; dueAt: string }>;

/** The sandbox rich provider's statuses still to make (delivered, then read). */
export type SandboxRichReports = ReportTimeline<Row, RichReport>;

export const richReports = (db: QueryExecutorProvider): SandboxRichReports =>
  new ReportTimeline(db, REPORTS, (x) => ({
    reportId: x.report_id,
    messageId: x.message_id,
    providerMessageId: x.provider_message_id,
    status: x.status,
    dueAt: iso(x.due_at),
  }));

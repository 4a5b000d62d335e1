import type { QueryExecutorProvider } from 'kysely';
import { type ReportTable, ReportTimeline } from '../shared/reports.js';
import { json } from '../shared/rows.js';
import type { SandboxReport } from './chat-platform.js';
import type { SandboxChatappReportsTable } from './db.js';

/** A message's statuses (or a template's review) are made in order, one after another (docs/sandbox.md#sms-receipts). */
const REPORTS: ReportTable<SandboxChatappReportsTable> = {
  table: 'sandbox_chatapp_reports',
  key: ['report_id'],
  subject: 'subject',
  keepsLastError: true,
};

/** The sandbox chat platform's reports still to make: statuses of sent messages and template reviews. */
export type SandboxChatappReports = ReportTimeline<SandboxChatappReportsTable, SandboxReport>;

export const chatappReports = (db: QueryExecutorProvider): SandboxChatappReports =>
  new ReportTimeline(db, REPORTS, (x) => json<SandboxReport>(x.payload));

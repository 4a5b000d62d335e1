import type { QueryExecutorProvider } from 'kysely';
import type { TemplateReview } from '../../../application/chatapp/chat-platform.port.js';
import type { DeliveryReceipt } from '../../../application/messaging/delivery/transport.port.js';
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

/** A report as the platform makes it: a message's status (a receipt to messaging), or a template's review. */
export type ChatappReport = Readonly<{ kind: 'status'; receipt: DeliveryReceipt }> | Readonly<{ kind: 'template'; review: TemplateReview }>;

/** What a stored report says, in the terms of the side it goes to (the platform's failure: its code and words). */
const reportOf = (p: SandboxReport): ChatappReport =>
  p.kind === 'status'
    ? {
        kind: 'status',
        receipt: {
          channel: 'chatapp',
          providerMessageId: p.platformMessageId,
          receiptId: p.statusId,
          status: p.status,
          at: p.at,
          failure: p.error ? { code: String(p.error.code), detail: p.error.detail } : null,
        },
      }
    : { kind: 'template', review: { platformTemplateId: p.platformTemplateId, approved: p.approved, reason: p.reason } };

/** The sandbox chat platform's reports still to make: statuses of sent messages and template reviews. */
export type SandboxChatappReports = ReportTimeline<SandboxChatappReportsTable, ChatappReport>;

export const chatappReports = (db: QueryExecutorProvider): SandboxChatappReports =>
  new ReportTimeline(db, REPORTS, (x) => reportOf(json<SandboxReport>(x.payload)));

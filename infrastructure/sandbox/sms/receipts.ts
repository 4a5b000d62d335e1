import type { QueryExecutorProvider } from 'kysely';
import type { SmsReceipt } from '../../../application/messaging/sms-carrier.port.js';
import { type ReportTable, ReportTimeline } from '../shared/reports.js';
import { iso } from '../shared/rows.js';
import type { SandboxSmsReceiptsTable } from './db.js';

/** A receipt is named by its id and its copy (a duplicated receipt is reported twice); a message's go in order. */
const RECEIPTS: ReportTable<SandboxSmsReceiptsTable> = {
  table: 'sandbox_sms_receipts',
  key: ['receipt_id', 'copy'],
  subject: 'carrier_message_id',
  keepsLastError: true,
};

/** The sandbox carrier's receipts still to report (docs/sandbox.md#sms-receipts), reported by a ReportWorker. */
export type SandboxSmsReceipts = ReportTimeline<SandboxSmsReceiptsTable, SmsReceipt>;

export const smsReceipts = (db: QueryExecutorProvider): SandboxSmsReceipts =>
  new ReportTimeline(db, RECEIPTS, (x) => ({
    carrierMessageId: x.carrier_message_id,
    receiptId: x.receipt_id,
    status: x.status,
    failureReason: x.failure_reason,
    errorCode: x.error_code,
    at: iso(x.happened_at),
  }));

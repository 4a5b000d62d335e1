import type { QueryExecutorProvider } from 'kysely';
import type { DeliveryReceipt } from '../../../application/messaging/delivery/transport.port.js';
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

/**
 * The sandbox carrier's receipts still to report (docs/sandbox.md#sms-receipts), reported by a ReportWorker as the
 * carrier reports them: a failed one with its code and the reason of docs/message-failures.md it means.
 */
export type SandboxSmsReceipts = ReportTimeline<SandboxSmsReceiptsTable, DeliveryReceipt>;

export const smsReceipts = (db: QueryExecutorProvider): SandboxSmsReceipts =>
  new ReportTimeline(db, RECEIPTS, (x) => ({
    channel: 'sms',
    providerMessageId: x.carrier_message_id,
    receiptId: x.receipt_id,
    status: x.status,
    at: iso(x.happened_at),
    failure: x.failure_reason === null && x.error_code === null ? null : { code: x.error_code, detail: x.failure_reason },
  }));

import type { ReportColumns } from '../shared/reports.js';
/** Kysely types of the sandbox SMS carrier's own tables (migration 060); not read models. */
export interface SandboxSmsSubmissionsTable {
  idempotency_key: string;
  carrier_message_id: string;
  account_id: string;
  from_number: string;
  to_number: string;
  body: string;
  /** a JSON array of URLs (jsonb: written as text, read back parsed) */
  media_urls: unknown;
  /** accepted | refused | lost (the first attempt of a "lost" magic number: nothing was sent) */
  status: string;
  failure_reason: string | null;
  error_code: string | null;
  /** accepted over the sending number's rate: fails with the rate-limited reason */
  rate_limited: boolean;
  submitted_at: Date | string;
  accepted_at: Date | string | null;
}
export interface SandboxSmsReceiptsTable extends ReportColumns {
  receipt_id: string;
  /** 0, or 1 for the second report of a duplicated receipt */
  copy: number;
  carrier_message_id: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  failure_reason: string | null;
  error_code: string | null;
  happened_at: Date | string;
  last_error: string | null;
}
export type SandboxSmsDb = {
  sandbox_sms_submissions: SandboxSmsSubmissionsTable;
  sandbox_sms_receipts: SandboxSmsReceiptsTable;
};

import type { ReportColumns } from '../shared/reports.js';
/** Kysely types of the sandbox chat platform's own tables (migration 101); not read models. */
export interface SandboxChatappNumbersTable {
  phone_number_id: string;
  business_account_id: string;
  phone_number: string;
  verified_name: string | null;
  created_at: Date | string;
}
export interface SandboxChatappRegistrationsTable {
  phone_number_id: string;
  registered_at: Date | string;
}
export interface SandboxChatappTemplatesTable {
  platform_template_id: string;
  business_account_id: string;
  name: string;
  language: string;
  category: string;
  body: string;
  /** PENDING until `decides_at`, then APPROVED or REJECTED (the platform's words) */
  status: string;
  reason: string | null;
  submitted_at: Date | string;
  decides_at: Date | string;
}
export interface SandboxChatappMessagesTable {
  idempotency_key: string;
  platform_message_id: string;
  phone_number_id: string;
  to_number: string;
  /** text | media | template */
  kind: string;
  body: string;
  template: unknown;
  /** accepted | refused */
  status: string;
  error_code: number | null;
  submitted_at: Date | string;
}
export interface SandboxChatappReportsTable extends ReportColumns {
  report_id: string;
  /** status (of a sent message) | template (a review) */
  kind: string;
  /** the platform message id or template id it is about */
  subject: string;
  payload: unknown;
  last_error: string | null;
}
export type SandboxChatappDb = {
  sandbox_chatapp_numbers: SandboxChatappNumbersTable;
  sandbox_chatapp_registrations: SandboxChatappRegistrationsTable;
  sandbox_chatapp_templates: SandboxChatappTemplatesTable;
  sandbox_chatapp_messages: SandboxChatappMessagesTable;
  sandbox_chatapp_reports: SandboxChatappReportsTable;
};

import type { ReportColumns } from '../shared/reports.js';
/** Kysely types of the sandbox rich-messaging provider's own tables (migration 111); not read models. */
export type SandboxRichDb = {
  sandbox_rich_lines: { phone_number: string; added_at: Date | string };
  sandbox_rich_messages: {
    idempotency_key: string;
    provider_message_id: string;
    from_number: string;
    to_number: string;
    body: string;
    media_urls: unknown;
    send_style: string | null;
    reply_to: string | null;
    submitted_at: Date | string;
  };
  sandbox_rich_reports: ReportColumns & {
    report_id: string;
    message_id: string;
    provider_message_id: string;
    status: 'delivered' | 'read';
  };
  sandbox_rich_contact_cards: {
    line: string;
    version: number;
    card: unknown;
    avatar_type: string | null;
    avatar_bytes: number | null;
    avatar_sha256: string | null;
    updated_at: Date | string;
  };
  sandbox_rich_backgrounds: {
    line: string;
    participant: string;
    idempotency_key: string | null;
    content_type: string | null;
    bytes: number | null;
    sha256: string | null;
    status: string;
    updated_at: Date | string;
  };
  sandbox_rich_actions: { action_id: string; kind: string; from_number: string; to_number: string; detail: unknown; at: Date | string };
};

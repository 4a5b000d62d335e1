/** Kysely types of the analytics read models (migration 120; docs/analytics.md). */
export interface AnalyticsMessagesTable {
  message_id: string;
  account_id: string;
  day: Date | string;
  at: Date | string;
  number_id: string;
  agent_id: string | null;
  direction: string;
  channel: string;
  /** the channel draws on credit (domain/analytics/counting.ts) */
  counted: boolean;
  segments: number;
  /** accepted, sent, delivered, read, failed (outbound); received (inbound) */
  status: string;
  failure_category: string | null;
  /** the revision of the message's own stream the row reflects; -1 before its first event */
  revision: string | bigint;
}
export interface AnalyticsCallsTable {
  call_id: string;
  account_id: string;
  day: Date | string;
  started_at: Date | string;
  number_id: string | null;
  agent_id: string | null;
  direction: string;
  /** in-progress, completed, failed */
  status: string;
  reason: string | null;
  duration_seconds: number;
  revision: string | bigint;
}
export interface AnalyticsCallTurnsTable {
  call_id: string;
  turn_id: string;
  account_id: string;
  agent_id: string | null;
  day: Date | string;
  at: Date | string;
  request_ms: number | null;
  first_byte_ms: number | null;
  speech_start_ms: number | null;
  total_ms: number | null;
}
export interface AnalyticsWebhookDeliveriesTable {
  delivery_id: string;
  account_id: string;
  webhook_id: string;
  day: Date | string;
  created_at: Date | string;
  event_type: string;
  test: boolean;
  /** pending, success, failed */
  status: string;
  attempts: number;
  revision: string | bigint;
}
export interface AnalyticsWebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  account_id: string;
  webhook_id: string;
  day: Date | string;
  attempted_at: Date | string;
  ok: boolean;
  http_status: number | null;
  duration_ms: number;
}
export interface AnalyticsChargesTable {
  charge_id: string;
  account_id: string;
  day: Date | string;
  at: Date | string;
  kind: string;
  amount_micros: string | bigint;
  /** what was bought: numbers looked up for a lookup charge, else 1 */
  quantity: number;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    analytics_messages: AnalyticsMessagesTable;
    analytics_calls: AnalyticsCallsTable;
    analytics_call_turns: AnalyticsCallTurnsTable;
    analytics_webhook_deliveries: AnalyticsWebhookDeliveriesTable;
    analytics_webhook_attempts: AnalyticsWebhookAttemptsTable;
    analytics_charges: AnalyticsChargesTable;
  }
}

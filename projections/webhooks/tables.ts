/** Kysely types of the webhooks read models: configurations, the delivery log and its attempts, the due timeline (migration 010). */

export interface WebhooksTable {
  scope_key: string;
  webhook_id: string;
  account_id: string;
  agent_id: string | null;
  url: string;
  secret: string;
  status: string;
  context_limit: number;
  timeout_seconds: number;
  /** jsonb: the list of public event names (migration 031); written as JSON text */
  events: unknown;
  consecutive_failures: number;
  created_position: string;
  created_at: Date | string;
  updated_at: Date | string;
  deleted_at: Date | string | null;
  revision: string | bigint;
}
export interface WebhookDeliveriesTable {
  delivery_id: string;
  account_id: string;
  webhook_id: string;
  webhook_agent_id: string | null;
  agent_id: string | null;
  event_type: string;
  channel: string | null;
  message_id: string | null;
  source_event_id: string | null;
  test: boolean;
  status: string;
  http_status: number | null;
  error_message: string | null;
  response_body: string | null;
  attempt_count: number;
  last_attempt_at: Date | string | null;
  next_retry_at: Date | string | null;
  created_at: Date | string;
  finished_at: Date | string | null;
  revision: string | bigint;
}
export interface WebhookDeliveryAttemptsTable {
  delivery_id: string;
  attempt: number;
  account_id: string;
  status: string;
  http_status: number | null;
  error_message: string | null;
  response_body: string | null;
  duration_ms: number;
  attempted_at: Date | string;
  next_retry_at: Date | string | null;
}
export interface WebhookDueAttemptsTable {
  delivery_id: string;
  account_id: string;
  attempt: number;
  due_at: Date | string;
  claimed_by: string | null;
  claimed_until: Date | string | null;
  revision: string | bigint;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    webhooks: WebhooksTable;
    webhook_deliveries: WebhookDeliveriesTable;
    webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
    webhook_due_attempts: WebhookDueAttemptsTable;
  }
}

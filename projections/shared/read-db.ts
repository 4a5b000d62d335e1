/** Kysely types of the read-model tables (the tables themselves are created by infrastructure migrations). */
import type { ColumnType } from 'kysely';
import type { NumberTables } from './number-tables.js';

/** The checkpoints of projectors and reactors alike (`kind`: projector | reactor; reactors' since migration 024). */
export interface ProjectionCheckpointsTable {
  name: string;
  kind: ColumnType<string, string | undefined, string>;
  checkpoint: string;
  updated_at: Date | string;
}
/** Which process drives a projector or reactor now, until when (see projections/shared/checkpoint-runner.ts). */
export interface WorkerLeasesTable {
  name: string;
  holder: string;
  expires_at: Date | string;
}
export interface AccountsTable {
  account_id: string;
  parent_account_id: string | null;
  name: string;
  status: string;
  balance_micros: string | bigint;
  number_limit: number;
  numbers_used: number;
  owner_email: string | null;
  project_id: string | null;
  created_at: Date | string;
  revision: string | bigint;
}
export interface AccountLedgerTable {
  entry_id: string;
  account_id: string;
  /** the account stream's revision: the ledger's true order */
  seq: string | bigint;
  /** `credit` or a ChargeKind */
  kind: string;
  /** positive for credits, negative for charges */
  amount_micros: string | bigint;
  balance_micros: string | bigint;
  description: string;
  reference: string | null;
  at: Date | string;
}
export interface ApiKeysTable {
  key_id: string;
  account_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: Date | string;
  revoked_at: Date | string | null;
}
export interface ApiKeyUsageTable {
  key_id: string;
  last_used_at: Date | string;
}
export interface SignupsTable {
  verification_id: string;
  email: string;
  client_address: string | null;
  status: string;
  account_id: string | null;
  requested_at: Date | string;
  updated_at: Date | string;
  revision: string | bigint;
}
export interface SandboxOutboxTable {
  message_id: string;
  to_address: string;
  subject: string;
  body: string;
  sent_at: Date | string;
}
export interface AgentsTable {
  agent_id: string;
  account_id: string;
  name: string;
  config: unknown;
  created_at: Date | string;
  deleted_at: Date | string | null;
  revision: string | bigint;
}
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
/**
 * Every read-model table. A capability adds its own tables from its own folder by declaration merging (see
 * projections/messaging/tables.ts), so this file is not edited to add one.
 */
export interface ReadDb extends NumberTables {
  projection_checkpoints: ProjectionCheckpointsTable;
  worker_leases: WorkerLeasesTable;
  accounts: AccountsTable;
  account_ledger: AccountLedgerTable;
  api_keys: ApiKeysTable;
  api_key_usage: ApiKeyUsageTable;
  signups: SignupsTable;
  sandbox_outbox: SandboxOutboxTable;
  agents: AgentsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  webhook_due_attempts: WebhookDueAttemptsTable;
}

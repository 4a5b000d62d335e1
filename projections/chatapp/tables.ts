import type { ColumnType } from 'kysely';

/** Kysely types of the chat-application channel's read models (migration 100). */
export interface ChatappConnectionsTable {
  connection_id: string;
  account_id: string;
  business_account_id: string;
  business_name: string | null;
  /** pending (being verified) | active | failed | deleted */
  status: string;
  failure_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  revision: string | bigint;
}

export interface ChatappNumbersTable {
  binding_id: string;
  account_id: string;
  connection_id: string;
  phone_number_id: string;
  phone_number: string | null;
  verified_name: string | null;
  agent_id: string | null;
  /** the line's id in conversations: the native number's when dual-channel, else the binding's (null until bound) */
  line_id: string | null;
  native_number_id: string | null;
  /** pending | bound | failed | unbound */
  status: string;
  failure_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  revision: string | bigint;
}

export interface ChatappTemplatesTable {
  template_id: string;
  account_id: string;
  connection_id: string;
  name: string;
  language: string;
  category: string;
  body: string;
  header: string | null;
  buttons: unknown;
  /** none | positional | named */
  parameter_format: string;
  variables: unknown;
  /** pending | approved | rejected */
  status: string;
  rejection_reason: string | null;
  platform_template_id: string | null;
  submission: number;
  created_at: Date | string;
  updated_at: Date | string;
  revision: string | bigint;
}

/** The last time each participant wrote on a line's chat conversation: the start of its 24-hour window. */
export interface ChatappWindowsTable {
  conversation_id: string;
  account_id: string;
  line_id: string;
  participant: string;
  last_inbound_at: ColumnType<Date | string, string, string>;
  revision: string | bigint;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    chatapp_connections: ChatappConnectionsTable;
    chatapp_numbers: ChatappNumbersTable;
    chatapp_templates: ChatappTemplatesTable;
    chatapp_windows: ChatappWindowsTable;
  }
}

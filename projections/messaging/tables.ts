/**
 * Kysely types of the messaging read model. The table was created early, by the numbers migration 020 (released
 * migrations are never edited); the messaging capability owns it.
 */
export interface MessagesTable {
  account_id: string;
  message_id: string;
  conversation_id: string | null;
  phone_number_id: string | null;
  agent_id: string | null;
  direction: string;
  channel: string | null;
  from_number: string;
  to_number: string;
  body: string;
  media_urls: unknown;
  status: string | null;
  failure_reason: string | null;
  reply_to_message_id: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  revision: string | bigint;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    messages: MessagesTable;
  }
}

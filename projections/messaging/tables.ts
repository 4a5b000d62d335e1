import type { ColumnType } from 'kysely';

/**
 * Kysely types of the messaging read models (migration 070; the `messages` table itself was created early, by
 * the numbers migration 020, and is owned by messaging).
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
  encoding: ColumnType<string | null, string | null | undefined, string | null>;
  segments: ColumnType<number | null, number | null | undefined, number | null>;
  error_code: ColumnType<string | null, string | null | undefined, string | null>;
  failure_category: ColumnType<string | null, string | null | undefined, string | null>;
  retryable: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  delivered_at: ColumnType<Date | string | null, string | null | undefined, string | null>;
  read_at: ColumnType<Date | string | null, string | null | undefined, string | null>;
  kind: ColumnType<string, string | undefined, string>;
  send_style: ColumnType<string | null, string | null | undefined, string | null>;
  message_revision: ColumnType<string | bigint, string | undefined, string>;
}

export interface ConversationsTable {
  account_id: string;
  conversation_id: string;
  phone_number_id: string;
  phone_number: string;
  agent_id: string | null;
  participant: string;
  channel: string;
  is_group: boolean;
  group_id: string | null;
  group_name: string | null;
  group_icon_url: string | null;
  participants: unknown;
  message_count: number;
  inbound_count: number;
  outbound_since_reply: number;
  reengagement_locked: boolean;
  last_message_at: Date | string;
  last_message_preview: string;
  conversation_state: unknown;
  created_at: Date | string;
  revision: string | bigint;
}

export interface MessageReactionsTable {
  reaction_id: string;
  account_id: string;
  message_id: string;
  reaction_type: string;
  from_number: string;
  direction: string;
  created_at: Date | string;
}

/** The provider's ids of a sent message, by the message's channel: receipts name a message by them (docs/messaging.md#receiving). */
export interface MessageCarrierIdsTable {
  /** the message's channel (`sms`, `mms`, `chatapp`, `imessage`): providers' ids are unique only within their own */
  channel: string;
  carrier_message_id: string;
  account_id: string;
  message_id: string;
}

export interface OptOutsTable {
  account_id: string;
  participant: string;
  /** '' for an opt-out from every number of the account */
  number_id: string;
  keyword: string;
  opted_out_at: Date | string;
  /** false once lifted: the row stays, so that a replayed older opt-out cannot bring it back */
  opted_out: boolean;
  /** revision of the recipient's consent stream that the row reflects */
  revision: string;
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  request_hash: string;
  status: number | null;
  answer: unknown;
  created_at: Date | string;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    messages: MessagesTable;
    conversations: ConversationsTable;
    message_reactions: MessageReactionsTable;
    message_carrier_ids: MessageCarrierIdsTable;
    opt_outs: OptOutsTable;
    idempotency_keys: IdempotencyKeysTable;
  }
}

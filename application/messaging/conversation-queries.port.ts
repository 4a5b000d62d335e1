import type { Page, PageOf } from '../shared/page.js';

/** A reaction on a message (docs/messaging.md#reactions). */
export type ReactionView = Readonly<{ id: string; reactionType: string; fromNumber: string; direction: string; createdAt: string }>;

/** A message as conversations and lists show it (docs/messaging.md#reading). */
export type ConversationMessageView = Readonly<{
  id: string;
  conversationId: string | null;
  phoneNumberId: string | null;
  agentId: string | null;
  body: string;
  fromNumber: string;
  toNumber: string;
  direction: 'inbound' | 'outbound';
  channel: string | null;
  status: string | null;
  failureReason: string | null;
  errorCode: string | null;
  failureCategory: string | null;
  retryable: boolean | null;
  encoding: string | null;
  segments: number | null;
  mediaUrls: string[];
  receivedAt: string;
  deliveredAt: string | null;
  readAt: string | null;
  replyToMessageId: string | null;
  reactions: ReactionView[];
}>;

export type ConversationView = Readonly<{
  id: string;
  accountId: string;
  agentId: string | null;
  phoneNumberId: string;
  phoneNumber: string;
  participant: string;
  channel: string;
  isGroup: boolean;
  groupId: string | null;
  groupName: string | null;
  groupIconUrl: string | null;
  participants: string[] | null;
  lastMessageAt: string;
  lastMessagePreview: string;
  messageCount: number;
  createdAt: string;
  conversationState: Record<string, unknown> | null;
  /** for the capabilities: whether the participant ever wrote, the running streak, the re-engagement lock */
  inboundCount: number;
  outboundSinceReply: number;
  reengagementLocked: boolean;
}>;

export type OptOutView = Readonly<{ numberId: string | null; keyword: string; at: string }>;

export type CursorQuery = Readonly<{ limit: number; before?: string | undefined; after?: string | undefined }>;

export interface ConversationQueries {
  /** most recent activity first */
  list(accountId: string, page: Page, o?: { agentId?: string }): Promise<PageOf<ConversationView>>;
  get(accountId: string, conversationId: string): Promise<ConversationView | null>;
  /** newest first, cursor by time */
  messages(accountId: string, conversationId: string, q: CursorQuery): Promise<{ data: ConversationMessageView[]; hasMore: boolean }>;
  /** newest first, cursor by time; a released number's history included */
  numberMessages(accountId: string, numberId: string, q: CursorQuery): Promise<{ data: ConversationMessageView[]; hasMore: boolean }>;
  message(accountId: string, messageId: string): Promise<ConversationMessageView | null>;
  /** the message a provider's id names on one of these message channels (receipts carry only the provider's id) */
  messageIdByProviderId(channels: readonly string[], providerMessageId: string): Promise<{ accountId: string; messageId: string } | null>;
  /** the opt-outs in force for a participant on the account's numbers */
  optOuts(accountId: string, participant: string): Promise<OptOutView[]>;
  /** the channel of the participant's most recent conversation on a line (docs/messaging.md#channels), or null */
  latestChannel(accountId: string, numberId: string, participant: string): Promise<string | null>;
  /** of these lines, the one holding the participant's most recent conversation, or null */
  latestLine(accountId: string, numberIds: readonly string[], participant: string): Promise<string | null>;
}

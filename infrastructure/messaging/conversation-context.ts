import type { ConversationQueries } from '../../application/messaging/conversation-queries.port.js';
import type { ConversationContextPort } from '../../application/webhooks/webhook.port.js';
import type { HistoryItem } from '../../domain/webhook/webhook.js';

export type ContactOf = (accountId: string, phoneNumber: string) => Promise<Readonly<Record<string, unknown>> | null>;

/** What webhook payloads carry of a conversation: recent messages, the caller-written state, the participant's contact. */
export class MessagingConversationContext implements ConversationContextPort {
  constructor(
    private readonly queries: ConversationQueries & {
      recentHistory(q: {
        accountId: string;
        conversationId: string;
        limit: number;
        excludeMessageId: string | null;
      }): Promise<HistoryItem[]>;
    },
    private readonly contactOf: ContactOf,
  ) {}

  recentHistory(q: { accountId: string; conversationId: string; limit: number; excludeMessageId: string | null }) {
    return this.queries.recentHistory(q);
  }

  async conversationState(q: { accountId: string; conversationId: string }) {
    return (await this.queries.get(q.accountId, q.conversationId))?.conversationState ?? null;
  }

  contact(q: { accountId: string; phoneNumber: string }) {
    return this.contactOf(q.accountId, q.phoneNumber);
  }
}

import type { ContactLookupPort } from '../../application/contacts/contact-lookup.port.js';
import type { ContextQuery, ConversationContextPort, PayloadContext } from '../../application/webhooks/webhook.port.js';
import type { KyselyConversationQueries } from '../../projections/messaging/conversation.queries.js';

/**
 * What webhook payloads carry of a conversation: recent messages, the caller-written state, the participant's
 * contact; for a whole dispatch batch in three statements (docs/webhooks.md#payload-context), read through queries on
 * the connection for reads together, so that embedded the three go to the database as one message
 * (docs/event-store.md#reads-together).
 */
export class MessagingConversationContext implements ConversationContextPort {
  constructor(
    private readonly queries: Pick<KyselyConversationQueries, 'recentHistories' | 'conversationStates'>,
    private readonly contacts: ContactLookupPort,
  ) {}

  async contexts(queries: readonly ContextQuery[]): Promise<PayloadContext[]> {
    const inConversation = queries.flatMap((q) => (q.conversationId ? [{ ...q, conversationId: q.conversationId }] : []));
    const withContact = queries.flatMap((q) => (q.contactNumber ? [{ accountId: q.accountId, phoneNumber: q.contactNumber }] : []));
    const [histories, states, contacts] = await Promise.all([
      this.queries.recentHistories(inConversation),
      this.queries.conversationStates(inConversation),
      this.contacts.byPhoneNumbers(withContact),
    ]);
    let h = 0;
    let c = 0;
    return queries.map((q) => {
      const contact = q.contactNumber ? contacts[c++]! : null;
      if (!q.conversationId) return { recentHistory: [], conversationState: null, contact };
      return {
        recentHistory: histories[h++]!,
        conversationState: states.get(`${q.accountId}\u0000${q.conversationId}`) ?? null,
        contact,
      };
    });
  }
}

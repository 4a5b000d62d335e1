import type { ConversationContextPort } from '../../application/webhooks/webhook.port.js';

/** Until the messaging capability binds its own adapter: no history, no conversation state. */
export class NoConversationContext implements ConversationContextPort {
  async recentHistory() {
    return [];
  }
  async conversationState() {
    return null;
  }
}

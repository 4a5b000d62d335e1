import type { WebhookEnvelope } from '../../domain/webhook/webhook.js';

/**
 * The delivery body (docs/webhooks.md#the-delivery-contract): field order fixed here, `recentHistory` cut to `contextLimit` (the most
 * recent ones; none when 0). Serialised once, stored with the delivery, and sent byte for byte on every try.
 */
export function buildEnvelope(o: WebhookEnvelope & { contextLimit: number }): string {
  const limit = Math.max(0, Math.floor(o.contextLimit));
  const envelope: WebhookEnvelope = {
    event: o.event,
    channel: o.channel,
    timestamp: o.timestamp,
    agentId: o.agentId,
    data: o.data,
    conversationState: o.conversationState,
    recentHistory: limit === 0 ? [] : o.recentHistory.slice(-limit),
  };
  return JSON.stringify(envelope);
}

/** The fake `agent.message` of the test endpoints: an SMS as the messaging capability will send it. */
export function testMessageData(o: { agentId: string | null; now: string; messageId: string }) {
  return {
    messageId: o.messageId,
    conversationId: 'conv_test',
    numberId: 'num_test',
    from: '+14155550100',
    to: '+14155550199',
    contact: null,
    message: 'This is a test message from your agent platform.',
    mediaUrl: null,
    mediaUrls: [],
    direction: 'inbound',
    receivedAt: o.now,
    test: true,
  };
}

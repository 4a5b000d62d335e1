import type { ConversationEvent } from '../../domain/conversation/conversation.decider.js';
import type { MessageEvent } from '../../domain/message/message.decider.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { WebhookMapping } from '../webhooks/registry.js';

type Inbound = RecordedEvent<Extract<ConversationEvent, { type: 'InboundMessageReceived' }>>;
type Reacted = RecordedEvent<Extract<MessageEvent, { type: 'MessageReactionAdded' }>>;

/**
 * Inbound texts and reactions as the public `agent.message` and `agent.reaction` events
 * (docs/webhooks.md#the-delivery-contract). `contact` is filled in at dispatch from the account's contacts.
 */
export const messagingWebhookMappings: readonly WebhookMapping[] = [
  {
    domainEvent: 'InboundMessageReceived',
    event: 'agent.message',
    describe: (raw) => {
      const d = (raw as Inbound).data;
      return {
        agentId: d.agentId,
        channel: d.channel,
        messageId: d.messageId,
        conversationId: d.conversationId,
        contactNumber: d.from,
        data: {
          messageId: d.messageId,
          conversationId: d.conversationId,
          numberId: d.numberId,
          from: d.from,
          to: d.to,
          contact: null,
          message: d.body,
          mediaUrl: d.mediaUrls[0] ?? null,
          mediaUrls: d.mediaUrls,
          direction: 'inbound',
          receivedAt: d.receivedAt,
          // beyond the public fields: a consent keyword the platform acted on (docs/messaging.md#opt-out)
          keyword: d.keyword ? { kind: d.keyword.kind, keyword: d.keyword.keyword } : null,
          encoding: d.encoding,
          segments: d.segments,
        },
      };
    },
  },
  {
    domainEvent: 'MessageReactionAdded',
    event: 'agent.reaction',
    describe: (raw) => {
      const d = (raw as Reacted).data;
      if (d.direction !== 'inbound') return null;
      return {
        agentId: d.agentId,
        // a reaction to a text (SMS or MMS) is on the sms channel; others on the message's own channel
        channel: d.channel === 'mms' ? 'sms' : d.channel,
        messageId: d.messageId,
        conversationId: d.conversationId,
        contactNumber: d.fromNumber,
        data: {
          conversationId: d.conversationId,
          numberId: d.numberId,
          reactionType: d.reactionType,
          fromNumber: d.fromNumber,
          direction: 'inbound',
          messageId: d.messageId,
          messageBody: d.messageBody,
          messageMediaUrl: d.messageMediaUrls[0] ?? null,
          messageMediaUrls: d.messageMediaUrls,
          createdAt: d.createdAt,
        },
      };
    },
  },
];

import type { PhoneNumberEvent } from '../../domain/phone-number/phone-number.decider.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { WebhookMapping } from '../webhooks/registry.js';

type Of<T extends PhoneNumberEvent['type']> = RecordedEvent<Extract<PhoneNumberEvent, { type: T }>>;

/**
 * Number lifecycle as webhook events (our additions to the public event kinds, docs/webhooks.md#which-events-are-sent). A number's events go to the
 * webhook of the agent concerned when there is one (attach, detach, release of an attached number), else to
 * the account's master webhook.
 */
export const numberWebhookMappings: readonly WebhookMapping[] = [
  {
    domainEvent: 'NumberProvisioned',
    event: 'number.provisioned',
    describe: (raw) => {
      const { numberId, phoneNumber, country, areaCode, type, provisionedAt } = (raw as Of<'NumberProvisioned'>).data;
      return {
        agentId: null,
        channel: null,
        messageId: null,
        conversationId: null,
        data: { numberId, phoneNumber, country, areaCode, type, provisionedAt },
      };
    },
  },
  {
    domainEvent: 'NumberAttached',
    event: 'number.attached',
    describe: (raw) => {
      const { numberId, agentId, previousAgentId, attachedAt } = (raw as Of<'NumberAttached'>).data;
      return { agentId, channel: null, messageId: null, conversationId: null, data: { numberId, agentId, previousAgentId, attachedAt } };
    },
  },
  {
    domainEvent: 'NumberDetached',
    event: 'number.detached',
    describe: (raw) => {
      const { numberId, agentId, reason, detachedAt } = (raw as Of<'NumberDetached'>).data;
      return { agentId, channel: null, messageId: null, conversationId: null, data: { numberId, agentId, reason, detachedAt } };
    },
  },
  {
    domainEvent: 'NumberReleased',
    event: 'number.released',
    describe: (raw) => {
      const { numberId, phoneNumber, previousAgentId, releasedAt } = (raw as Of<'NumberReleased'>).data;
      return {
        agentId: previousAgentId,
        channel: null,
        messageId: null,
        conversationId: null,
        data: { numberId, phoneNumber, agentId: previousAgentId, releasedAt },
      };
    },
  },
];

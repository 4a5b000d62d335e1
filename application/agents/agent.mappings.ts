import type { AgentEvent } from '../../domain/agent/agent.decider.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { WebhookMapping } from '../webhooks/registry.js';

type Of<T extends AgentEvent['type']> = RecordedEvent<Extract<AgentEvent, { type: T }>>;

/**
 * Agent lifecycle as webhook events (our additions to the public event kinds, docs/webhooks.md#which-events-are-sent; receivers that switch on `event`
 * ignore names they do not know). No channel, no conversation.
 */
export const agentWebhookMappings: readonly WebhookMapping[] = [
  {
    domainEvent: 'AgentCreated',
    event: 'agent.created',
    describe: (raw) => {
      const e = raw as Of<'AgentCreated'>;
      return {
        agentId: e.data.agentId,
        channel: null,
        messageId: null,
        conversationId: null,
        data: { agentId: e.data.agentId, name: e.data.config.name, voiceMode: e.data.config.voiceMode, createdAt: e.data.createdAt },
      };
    },
  },
  {
    domainEvent: 'AgentUpdated',
    event: 'agent.updated',
    describe: (raw) => {
      const e = raw as Of<'AgentUpdated'>;
      return {
        agentId: e.data.agentId,
        channel: null,
        messageId: null,
        conversationId: null,
        data: { agentId: e.data.agentId, changes: e.data.changes, updatedAt: e.data.updatedAt },
      };
    },
  },
  {
    domainEvent: 'AgentDeleted',
    event: 'agent.deleted',
    describe: (raw) => {
      const e = raw as Of<'AgentDeleted'>;
      return {
        agentId: e.data.agentId,
        channel: null,
        messageId: null,
        conversationId: null,
        data: { agentId: e.data.agentId, name: e.data.name, deletedAt: e.data.deletedAt },
      };
    },
  },
];

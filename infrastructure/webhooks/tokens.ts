import type { DeliveryReplay } from '../../application/webhooks/delivery-replay.js';
import type {
  ConversationContextPort,
  WebhookQueries,
  WebhookSecretsPort,
  WebhookSenderPort,
  WebhookUrlPolicyPort,
} from '../../application/webhooks/webhook.port.js';
import type { WebhookCommands } from '../../application/webhooks/webhook-commands.js';
import { token } from '../capabilities/token.js';

/** The webhooks capability's tokens (its module binds them). */
export const WEBHOOKS = {
  Queries: token<WebhookQueries>('WebhookQueries'),
  Commands: token<WebhookCommands>('WebhookCommands'),
  Replay: token<DeliveryReplay>('DeliveryReplay'),
  Sender: token<WebhookSenderPort>('WebhookSenderPort'),
  Secrets: token<WebhookSecretsPort>('WebhookSecretsPort'),
  UrlPolicy: token<WebhookUrlPolicyPort>('WebhookUrlPolicyPort'),
  /** the conversation a payload's `recentHistory` and `conversationState` come from: bound by whoever owns conversations */
  ConversationContext: token<ConversationContextPort>('ConversationContextPort'),
} as const;

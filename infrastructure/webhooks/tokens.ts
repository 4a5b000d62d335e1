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
import type { WebhookDeliveryWorker } from './delivery-worker.js';

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
  /** this process's delivery worker (bound when WEBHOOK_CONCURRENCY > 0), which the dispatcher hands first attempts */
  Worker: token<WebhookDeliveryWorker>('WebhookDeliveryWorker'),
} as const;

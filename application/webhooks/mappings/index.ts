import type { WebhookMapping } from '../registry.js';
import { agentWebhookMappings } from './agent.mappings.js';
import { numberWebhookMappings } from './number.mappings.js';

/** Every domain event that becomes a webhook event. One line per capability (messages, calls, numbers…). */
export const allWebhookMappings: readonly WebhookMapping[] = [
  ...agentWebhookMappings,
  ...numberWebhookMappings,
];

/**
 * Webhook configuration values and the public delivery contract (docs/webhooks.md).
 * Pure data: the deciders, the application and the HTTP edge all read their limits from here.
 */
export const CONTEXT_LIMIT = { min: 0, max: 50, default: 10 } as const;
export const TIMEOUT_SECONDS = { min: 5, max: 120, default: 30 } as const;

/**
 * `status` of a webhook configuration (docs/webhooks.md#status):
 *  - `active`   : deliveries are scheduled and sent.
 *  - `failing`  : the most recent finished delivery exhausted all its attempts; deliveries continue.
 *  - `disabled` : DISABLE_AFTER_EXHAUSTED deliveries in a row exhausted all attempts; nothing is sent to it
 *                 any more (new events are not scheduled, pending ones are abandoned) until the webhook is
 *                 configured again (POST), which makes it `active`.
 * A delivered event while `failing` makes it `active` again.
 */
export const WEBHOOK_STATUSES = ['active', 'failing', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** Consecutive exhausted deliveries (each about 20 hours of failed attempts) after which a webhook is disabled. */
export const DISABLE_AFTER_EXHAUSTED = 5;
/**
 * At this many exhausted deliveries in a row the account is warned that the next one disables the webhook
 * (docs/webhooks.md#status): a notice in the delivery log and an e-mail to the account's address.
 */
export const WARN_AFTER_EXHAUSTED = DISABLE_AFTER_EXHAUSTED - 1;

/** Public event names (docs/webhooks.md#which-events-are-sent: a separate, explicit map from domain events). */
export type WebhookEventName =
  | 'agent.message'
  | 'agent.reaction'
  | 'agent.call_ended'
  | 'agent.created'
  | 'agent.updated'
  | 'agent.deleted'
  | 'number.provisioned'
  | 'number.attached'
  | 'number.detached'
  | 'number.released'
  | (string & {});

/**
 * Which events a webhook receives (docs/webhooks.md#choosing-events): a list of public event names. The public
 * kinds are the default; lifecycle events (`agent.created`, `number.*`, …) only reach a webhook that lists
 * them, and `*` means every event.
 */
export const PUBLIC_WEBHOOK_EVENTS = ['agent.message', 'agent.reaction', 'agent.call_ended'] as const;
export const EVERY_WEBHOOK_EVENT = '*';
export const DEFAULT_WEBHOOK_EVENTS: readonly string[] = PUBLIC_WEBHOOK_EVENTS;
/** Longest list a webhook may name (there are far fewer events than this). */
export const MAX_WEBHOOK_EVENTS = 50;

/** Whether a webhook with this list receives the event. */
export const receives = (events: readonly string[], event: string): boolean =>
  events.includes(EVERY_WEBHOOK_EVENT) || events.includes(event);

/** One item of `recentHistory` (docs/webhooks.md#the-delivery-contract). */
export type HistoryItem = Readonly<{ messageId: string | null; content: string; direction: string; channel: string; at: string }>;

/** The JSON body of every delivery (docs/webhooks.md#the-delivery-contract), in the order the fields are written. */
export type WebhookEnvelope = Readonly<{
  event: WebhookEventName;
  channel: string | null;
  timestamp: string;
  agentId: string | null;
  data: Readonly<Record<string, unknown>>;
  conversationState: Readonly<Record<string, unknown>> | null;
  recentHistory: readonly HistoryItem[];
}>;

/** Deterministic delivery id for a source event: re-running the dispatcher schedules nothing new. */
export const deliveryIdFor = (sourceEventId: string): string => `whd_${sourceEventId.replace(/-/g, '').toLowerCase()}`;

import { DEFAULT_WEBHOOK_EVENTS } from '../../domain/webhook/webhook.js';

type Upcaster = (data: Record<string, unknown>, version: number) => Record<string, unknown>;

/** Webhook configurations recorded before webhooks chose their events receive the default list. */
const webhookEventsDefault: Upcaster = (d) => (d.events === undefined ? { ...d, events: [...DEFAULT_WEBHOOK_EVENTS] } : d);
/** Conversations started before channels existed are text conversations; reactions recorded then were on texts (docs/messaging.md#channels). */
const withDefault =
  (field: string, value: string): Upcaster =>
  (d) =>
    d[field] === undefined ? { ...d, [field]: value } : d;

/**
 * Upcasters run on read in every event-store adapter, so the domain only ever sees the newest shape of an
 * event (docs/event-store.md#aggregates-and-events). Keyed by event type; each receives the stored data and its schema version.
 * An event type without an entry is passed through. A field added with a default needs no new version: its
 * absence marks the older events.
 */
export const upcasters: Readonly<Record<string, Upcaster>> = {
  WebhookCreated: webhookEventsDefault,
  WebhookUpdated: webhookEventsDefault,
  ConversationStarted: withDefault('channel', 'native'),
  MessageReactionAdded: withDefault('channel', 'sms'),
};

export const upcast = (type: string, data: Record<string, unknown>, version: number): Record<string, unknown> => {
  const up = upcasters[type];
  return up ? up(data, version) : data;
};

import type { WebhookEventName } from '../../domain/webhook/webhook.js';
import type { RecordedEvent } from '../ports/event-store.port.js';

/** What a domain event becomes on the wire; null from `describe` means "this one is not delivered". */
export type WebhookDescription = Readonly<{
  /** the agent the event is about: picks the agent's own webhook, else the account's master */
  agentId: string | null;
  channel: string | null;
  /** the record the event is about (shown as `messageId` in the delivery log) */
  messageId: string | null;
  /** when set, `recentHistory` and `conversationState` come from this conversation */
  conversationId: string | null;
  /** when set, `data.contact` is the account's contact with this phone number (or null) */
  contactNumber?: string | null;
  data: Readonly<Record<string, unknown>>;
}>;

/**
 * Maps one domain event type to one public webhook event (docs/webhooks.md#which-events-are-sent: public names live in an explicit
 * map). A capability that emits webhook events only adds its mappings to `mappings/index.ts`; the pipeline
 * (dispatch, delivery, retries, log) does not change.
 */
export type WebhookMapping = Readonly<{
  domainEvent: string;
  event: WebhookEventName;
  describe: (e: RecordedEvent) => WebhookDescription | null;
}>;

export class WebhookEventRegistry {
  private readonly byType = new Map<string, WebhookMapping>();

  constructor(mappings: readonly WebhookMapping[]) {
    for (const m of mappings) {
      if (this.byType.has(m.domainEvent)) throw new Error(`two webhook mappings for ${m.domainEvent}`);
      this.byType.set(m.domainEvent, m);
    }
  }

  /** the domain event types the dispatcher subscribes to */
  types(): string[] {
    return [...this.byType.keys()];
  }

  get(domainEvent: string): WebhookMapping | undefined {
    return this.byType.get(domainEvent);
  }
}

import { webhookDecider, webhookStream } from '../../domain/webhook/webhook.decider.js';
import type { WebhookDeliveryEvent } from '../../domain/webhook/webhook-delivery.decider.js';
import { parseCheckpoint, type RecordedEvent } from '../ports/event-store.port.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { Reactor } from '../shared/process-manager.js';
import { WEBHOOK_ACTOR } from './webhook-dispatcher.js';

/** A checkpoint as a fixed-width string, so that string order is log order (for the replay guard). */
export const sortablePosition = (checkpoint: string): string => {
  const [a, b] = parseCheckpoint(checkpoint);
  return `${a.toString().padStart(20, '0')}/${b.toString().padStart(20, '0')}`;
};

/**
 * The health reactor: feeds finished deliveries back to their webhook, which moves between active, failing
 * and disabled (domain/webhook/webhook.ts). Test deliveries and abandoned ones do not count. Events are
 * handled in log order; the webhook remembers the position of the last outcome it counted, so a replayed
 * batch changes nothing.
 */
export class WebhookHealthReactor implements Reactor {
  readonly name = 'webhook_health';
  readonly handles = ['WebhookDeliverySucceeded', 'WebhookDeliveryFailed'] as const;

  constructor(private readonly exec: CommandExecutor) {}

  /** A webhook's outcomes are counted in log order (its replay guard compares positions), so they share a partition. */
  partitionKey(raw: RecordedEvent): string {
    const { accountId, webhookAgentId } = (raw as RecordedEvent<WebhookDeliveryEvent>).data as {
      accountId: string;
      webhookAgentId: string | null;
    };
    return webhookStream(webhookAgentId ?? accountId);
  }

  async handleBatch(batch: readonly RecordedEvent[]): Promise<void> {
    // a webhook's outcomes of the batch are decided in log order on its stream, read once and appended once
    const items = batch.flatMap((raw) => {
      const e = raw as RecordedEvent<WebhookDeliveryEvent>;
      if (e.type !== 'WebhookDeliverySucceeded' && e.type !== 'WebhookDeliveryFailed') return [];
      if (e.data.test) return [];
      if (e.type === 'WebhookDeliveryFailed' && e.data.reason !== 'exhausted') return [];
      const { accountId, webhookId, webhookAgentId, deliveryId } = e.data;
      return [
        {
          stream: webhookStream(webhookAgentId ?? accountId),
          input: {
            type: 'RecordDeliveryOutcome' as const,
            data: {
              webhookId,
              deliveryId,
              outcome: e.type === 'WebhookDeliverySucceeded' ? ('delivered' as const) : ('exhausted' as const),
              position: sortablePosition(e.checkpoint),
            },
          },
          ctx: { accountId, correlationId: e.metadata.correlationId, causationId: e.id, requestId: null, actor: WEBHOOK_ACTOR },
        },
      ];
    });
    await this.exec.executeMany(webhookDecider, items);
  }
}

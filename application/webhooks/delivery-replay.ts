import { DomainError } from '../../domain/shared/errors.js';
import { type RetrySource, webhookDeliveryDecider, webhookDeliveryStream } from '../../domain/webhook/webhook-delivery.decider.js';
import { type Checkpoint, compareCheckpoints } from '../ports/event-store.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { DeliveryView, WebhookQueries } from './webhook.port.js';

/** Most deliveries one recover request queues; the answer says when more are left (docs/webhooks.md#sending-a-delivery-again). */
export const RECOVER_MAX = 500;
/** Deliveries queued side by side by one recover request. */
const RECOVER_PARALLEL = 8;

export type RecoverResult = Readonly<{
  since: string;
  /** deliveries sent again, as new attempts */
  queued: number;
  /** failed deliveries left alone: their webhook is deleted or disabled, or they were sent again meanwhile */
  skipped: number;
  /** more failed deliveries remain: ask again */
  hasMore: boolean;
  deliveryIds: string[];
}>;

/**
 * Delivery replay, as receivers of Svix and Stripe know it: a finished delivery is sent again as a new attempt
 * with the same id (so the same `X-Webhook-ID`), recorded on the delivery's own stream and sent by the delivery
 * workers like any due attempt. Only a webhook that can receive takes one: a deleted or disabled webhook answers
 * 409 WEBHOOK_NOT_SENDABLE (configure it again first).
 */
export class DeliveryReplay {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly webhooks: WebhookQueries,
    private readonly readModels: ReadModelsPort,
  ) {}

  /** POST /v1/webhooks/deliveries/{id}/retry: answers the delivery, pending again with its new attempt due. */
  async retry(ctx: RequestContext, deliveryId: string): Promise<DeliveryView> {
    await this.requireSendable(ctx, deliveryId);
    await this.send(ctx, deliveryId, 'retry', true);
    const view = await this.webhooks.delivery(ctx.accountId, deliveryId);
    if (!view) throw new DomainError('WEBHOOK_DELIVERY_NOT_FOUND', 'Delivery not found');
    return view;
  }

  /** POST /v1/webhooks/deliveries/recover: sends again every delivery that ended failed since `since`. */
  async recover(ctx: RequestContext, since: string): Promise<RecoverResult> {
    const { ids, more } = await this.webhooks.failedSince(ctx.accountId, since, RECOVER_MAX);
    const queued: string[] = [];
    let skipped = 0;
    let last: Checkpoint | null = null;
    for (let i = 0; i < ids.length; i += RECOVER_PARALLEL) {
      const results = await Promise.all(
        ids.slice(i, i + RECOVER_PARALLEL).map(async (id) => {
          try {
            await this.requireSendable(ctx, id);
            return { id, checkpoint: await this.send(ctx, id, 'recover', false) };
          } catch (err) {
            // its webhook cannot receive, or it is pending again (a retry that came first): leave it
            if (err instanceof DomainError && (err.code === 'WEBHOOK_NOT_SENDABLE' || err.code === 'WEBHOOK_DELIVERY_PENDING')) return null;
            throw err;
          }
        }),
      );
      for (const r of results) {
        if (!r) skipped++;
        else {
          queued.push(r.id);
          if (r.checkpoint && (last === null || compareCheckpoints(r.checkpoint, last) > 0)) last = r.checkpoint;
        }
      }
    }
    // the log shows them pending once the answer is out (the latest append covers the others: one log order)
    if (last) await this.readModels.waitFor(last, ['WebhookDeliveryRetryRequested']);
    return { since, queued: queued.length, skipped, hasMore: more, deliveryIds: queued };
  }

  private async send(ctx: RequestContext, deliveryId: string, source: RetrySource, readYourWrites: boolean): Promise<Checkpoint | null> {
    const r = await this.exec.execute(
      webhookDeliveryDecider,
      webhookDeliveryStream(deliveryId),
      { type: 'RetryDelivery', data: { deliveryId, source } },
      ctx,
      { readYourWrites },
    );
    return r.checkpoint;
  }

  /** The delivery is the account's and its webhook can receive now. */
  private async requireSendable(ctx: RequestContext, deliveryId: string): Promise<void> {
    const { state } = await this.exec.state(webhookDeliveryDecider, webhookDeliveryStream(deliveryId));
    if (state.status === 'none' || state.accountId !== ctx.accountId)
      throw new DomainError('WEBHOOK_DELIVERY_NOT_FOUND', 'Delivery not found');
    const webhook = await this.webhooks.byId(ctx.accountId, state.webhookId);
    if (!webhook)
      throw new DomainError('WEBHOOK_NOT_SENDABLE', 'The webhook this delivery was for has been deleted, so it cannot be sent again.');
    if (webhook.status === 'disabled')
      throw new DomainError(
        'WEBHOOK_NOT_SENDABLE',
        'The webhook this delivery was for is disabled. Configure it again (POST /v1/webhooks) to make it active, then retry.',
      );
  }
}

import {
  type AttemptResult,
  type WebhookDeliveryEvent,
  webhookDeliveryDecider,
  webhookDeliveryStream,
} from '../../domain/webhook/webhook-delivery.decider.js';
import type { ClockPort } from '../ports/clock.port.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { ProcessManager } from '../shared/process-manager.js';
import type { WebhookQueries, WebhookSenderPort, WebhookUrlPolicyPort } from './webhook.port.js';

type Scheduled = Extract<WebhookDeliveryEvent, { type: 'WebhookDeliveryScheduled' }>;

/**
 * Sends test deliveries (`POST /v1/webhooks/test`, `POST /v1/agents/{id}/webhook/test`; docs/webhooks.md). The
 * request records a one-attempt test delivery and awaits its outcome; this process sends it through the same
 * signing and sending path as real deliveries and records the attempt. A test delivery is never on the retry
 * timeline and never counts in the webhook's health; unlike a real one it is sent even while the webhook is
 * disabled, so that a customer can check a repaired endpoint.
 */
export class WebhookTestSend extends ProcessManager<Scheduled> {
  readonly name = 'webhook_test_send';
  readonly handles = ['WebhookDeliveryScheduled'] as const;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly clock: ClockPort,
    private readonly webhooks: WebhookQueries,
    private readonly urlPolicy: WebhookUrlPolicyPort,
    private readonly sender: WebhookSenderPort,
    private readonly o: { defaultDeadlineMs: number },
  ) {
    super();
  }

  protected instanceOf(e: RecordedEvent<Scheduled>): string {
    return e.data.deliveryId;
  }

  protected async react(e: RecordedEvent<Scheduled>, ctx: RequestContext): Promise<void> {
    if (!e.data.test) return;
    const stream = webhookDeliveryStream(e.data.deliveryId);
    const { state } = await this.exec.state(webhookDeliveryDecider, stream);
    // sent already (a redelivered event after a crash between the send and the checkpoint): nothing to do
    if (state.status !== 'pending' || state.attempts > 0) return;
    const webhook = await this.webhooks.byId(state.accountId, state.webhookId);
    if (!webhook) {
      await this.exec.execute(
        webhookDeliveryDecider,
        stream,
        { type: 'AbandonDelivery', data: { deliveryId: state.deliveryId, reason: 'webhook_deleted' } },
        ctx,
      );
      return;
    }
    const refused = await this.urlPolicy.check(webhook.url);
    const result: AttemptResult = refused
      ? {
          ok: false,
          httpStatus: null,
          errorMessage: `address not allowed: ${refused}`,
          responseBody: null,
          durationMs: 0,
          retryAfterS: null,
        }
      : await this.sender.send({
          url: webhook.url,
          secret: webhook.secret,
          webhookId: state.deliveryId,
          timestamp: Math.floor(this.clock.now().getTime() / 1000),
          body: state.body,
          deadlineMs: this.o.defaultDeadlineMs,
        });
    await this.exec.execute(
      webhookDeliveryDecider,
      stream,
      { type: 'RecordAttempt', data: { deliveryId: state.deliveryId, attempt: 1, result } },
      ctx,
    );
  }
}

import { streams } from '../../domain/shared/streams.js';
import {
  type AbandonReason,
  type WebhookDeliveryCommand,
  type WebhookDeliveryState,
  webhookDeliveryDecider,
} from '../../domain/webhook/webhook-delivery.decider.js';
import type { ClockPort } from '../ports/clock.port.js';
import { type EventMetadata, type EventStorePort, WrongExpectedRevisionError } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import type { ClaimedAttempt, WebhookQueries, WebhookSenderPort } from './webhook.port.js';
import { WEBHOOK_ACTOR } from './webhook-dispatcher.js';

export type DeliverOutcome = 'sent' | 'stale' | 'abandoned' | 'aborted';

/**
 * Sends one claimed attempt. The delivery's own stream is the truth: when it already records this attempt
 * (the timeline row lags behind its projector) nothing is sent. The webhook is read at attempt time, so a
 * new URL or secret applies to retries; a deleted or disabled webhook ends the delivery without a send.
 * The outcome is appended after the POST, outside any transaction; a crash in between leaves the claim to
 * expire, and the attempt is sent again (at least once).
 */
export class WebhookDeliverer {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly store: EventStorePort,
    private readonly ids: IdsPort,
    private readonly clock: ClockPort,
    private readonly webhooks: WebhookQueries,
    private readonly sender: WebhookSenderPort,
    private readonly log: LoggerPort,
    private readonly o: { defaultDeadlineMs: number },
  ) {}

  async deliver(claim: ClaimedAttempt, signal?: AbortSignal): Promise<DeliverOutcome> {
    const stream = streams.webhookDelivery(claim.deliveryId);
    const { state, revision } = await this.exec.load(webhookDeliveryDecider, stream);
    if (state.status !== 'pending' || state.attempts + 1 !== claim.attempt) return 'stale';

    const webhook = await this.webhooks.byId(state.accountId, state.webhookId);
    if (!webhook || webhook.status === 'disabled') {
      await this.record(stream, state.accountId, revision, state, {
        type: 'AbandonDelivery',
        data: { deliveryId: claim.deliveryId, reason: (webhook ? 'webhook_disabled' : 'webhook_deleted') satisfies AbandonReason },
      });
      return 'abandoned';
    }

    // voice turns wait as long as the webhook's own timeout allows; other events get the service default
    const deadlineMs = state.channel === 'voice' ? webhook.timeout * 1000 : this.o.defaultDeadlineMs;
    const result = await this.sender.send({
      url: webhook.url,
      secret: webhook.secret,
      webhookId: claim.deliveryId,
      timestamp: Math.floor(this.clock.now().getTime() / 1000),
      body: state.body,
      deadlineMs,
      ...(signal ? { signal } : {}),
    });
    if (signal?.aborted) return 'aborted'; // shutting down mid-request: the claim expires and the attempt is sent again
    await this.record(stream, state.accountId, revision, state, {
      type: 'RecordAttempt',
      data: { deliveryId: claim.deliveryId, attempt: claim.attempt, result },
    });
    if (!result.ok)
      this.log.info(
        { deliveryId: claim.deliveryId, attempt: claim.attempt, httpStatus: result.httpStatus, error: result.errorMessage },
        'webhook attempt failed',
      );
    return 'sent';
  }

  /**
   * Decides on the state already loaded and appends at its revision; only when the stream moved meanwhile
   * (another worker recorded something) does it go the general way: reload, decide again.
   */
  private async record(
    stream: string,
    accountId: string,
    revision: bigint | 'no_stream',
    state: WebhookDeliveryState,
    c: CommandInput<WebhookDeliveryCommand>,
  ): Promise<void> {
    const cmd = { ...c, metadata: { now: this.exec.now(), accountId } } as WebhookDeliveryCommand;
    const meta: EventMetadata = { accountId, correlationId: stream, causationId: null, requestId: null, actor: WEBHOOK_ACTOR };
    const events = webhookDeliveryDecider.decide(cmd, state);
    if (events.length === 0) return;
    try {
      await this.store.appendToStream(
        stream,
        events.map((e) => ({ ...e, id: this.ids.uuid(), metadata: meta })),
        { expectedRevision: revision },
      );
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError)) throw err;
      await this.exec.execute(webhookDeliveryDecider, stream, c, {
        accountId,
        correlationId: stream,
        requestId: null,
        actor: WEBHOOK_ACTOR,
      });
    }
  }
}

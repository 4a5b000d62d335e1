import { storableText } from '../../domain/shared/storable-text.js';
import {
  type AbandonReason,
  type AttemptResult,
  type WebhookDeliveryCommand,
  type WebhookDeliveryState,
  webhookDeliveryDecider,
  webhookDeliveryStream,
} from '../../domain/webhook/webhook-delivery.decider.js';
import type { ClockPort } from '../ports/clock.port.js';
import { type EventMetadata, type EventStorePort, WrongExpectedRevisionError } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import { oncePerKey } from '../shared/once-per-key.js';
import type { ClaimedAttempt, PreparedAttempt, WebhookQueries, WebhookSenderPort } from './webhook.port.js';
import { WEBHOOK_ACTOR } from './webhook-dispatcher.js';

export type DeliverOutcome = 'sent' | 'stale' | 'abandoned' | 'aborted';

/**
 * An attempt was sent but its outcome cannot be recorded, not even without the receiver's words, for a reason
 * retrying cannot cure: sending it again would fail the same way, so the worker isolates it
 * (docs/operations.md#isolated-work).
 */
export class AttemptNotRecordableError extends Error {
  constructor(
    readonly deliveryId: string,
    readonly attempt: number,
    override readonly cause: unknown,
  ) {
    super(
      `the outcome of attempt ${attempt} of ${deliveryId} cannot be recorded: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.name = 'AttemptNotRecordableError';
  }
}

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
    private readonly o: {
      defaultDeadlineMs: number;
      /** whether a failed write may succeed when tried again (the database away); default: always */
      isTransient?: (err: unknown) => boolean;
    },
  ) {}

  async deliver(claim: ClaimedAttempt, signal?: AbortSignal): Promise<DeliverOutcome> {
    const [attempt] = await this.prepare([claim]);
    return this.send(attempt!, signal);
  }

  /**
   * Loads what a batch of claimed attempts needs before sending: the deliveries' states (from the command path's
   * cache where it is exact, the others in one read), and each webhook once, whatever the number of its attempts in
   * the batch.
   */
  async prepare(claims: readonly ClaimedAttempt[]): Promise<PreparedAttempt[]> {
    // embedded, the dispatcher that scheduled them left their states in the command path's cache
    const states = await this.exec.statesOf(
      webhookDeliveryDecider,
      claims.map((c) => webhookDeliveryStream(c.deliveryId)),
    );
    const webhookOf = oncePerKey(
      (accountId: string, webhookId: string) => `${accountId}|${webhookId}`,
      (accountId: string, webhookId: string) => this.webhooks.byId(accountId, webhookId),
    );
    return Promise.all(
      claims.map(async (claim) => {
        const stream = webhookDeliveryStream(claim.deliveryId);
        const { state, revision } = states.get(stream)!;
        if (state.status !== 'pending') return { claim, stream, state, revision, webhook: null };
        return { claim, stream, state, revision, webhook: await webhookOf(state.accountId, state.webhookId) };
      }),
    );
  }

  /** Sends one prepared attempt and records its outcome. */
  async send(p: PreparedAttempt, signal?: AbortSignal): Promise<DeliverOutcome> {
    const { claim, stream, state, revision, webhook } = p;
    if (state.status !== 'pending' || state.attempts + 1 !== claim.attempt) return 'stale';

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
    const recordAttempt = (r: AttemptResult) =>
      this.record(stream, state.accountId, revision, state, {
        type: 'RecordAttempt',
        data: { deliveryId: claim.deliveryId, attempt: claim.attempt, result: r },
      });
    try {
      await recordAttempt(result);
    } catch (err) {
      if (this.o.isTransient?.(err) ?? true) throw err;
      // the attempt happened: what cannot be stored is what the receiver said, so it is recorded without it
      // (docs/webhooks.md#hostile-answers); a second refusal is for the worker to isolate
      this.log.error({ err, deliveryId: claim.deliveryId, attempt: claim.attempt }, 'webhook answer not storable; recorded without it');
      try {
        await recordAttempt(withoutAnswer(result, err));
      } catch (again) {
        if (this.o.isTransient?.(again) ?? true) throw again;
        throw new AttemptNotRecordableError(claim.deliveryId, claim.attempt, again);
      }
    }
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

/** An attempt's outcome without the receiver's words, and why they are missing. */
function withoutAnswer(result: AttemptResult, err: unknown): AttemptResult {
  const why = `the answer could not be recorded: ${storableText(err instanceof Error ? err.message : String(err), 200)}`;
  return result.ok ? { ...result, responseBody: null } : { ...result, responseBody: null, errorMessage: `${result.errorMessage}; ${why}` };
}

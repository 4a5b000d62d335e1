import { MAX_ATTEMPTS } from '../../domain/webhook/retry-policy.js';
import {
  type AttemptResult,
  type WebhookDeliveryCommand,
  type WebhookDeliveryEvent,
  webhookDeliveryDecider,
} from '../../domain/webhook/webhook-delivery.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(webhookDeliveryDecider);
const T0 = '2026-01-01T00:00:00.000Z';
const at = (iso: string) => ({ now: iso, accountId: 'acc_1' });
const target = { webhookId: 'whk_1', webhookAgentId: null };
const description = {
  eventType: 'agent.message',
  channel: 'sms',
  agentId: 'agt_1',
  messageId: 'msg_1',
  sourceEventId: 'evt_1',
  sourceEventType: 'MessageReceived',
  body: '{"event":"agent.message"}',
};
const schedule: WebhookDeliveryCommand = {
  type: 'ScheduleDelivery',
  data: { deliveryId: 'whd_1', ...target, ...description },
  metadata: at(T0),
};
const scheduled: WebhookDeliveryEvent = {
  type: 'WebhookDeliveryScheduled',
  data: {
    deliveryId: 'whd_1',
    accountId: 'acc_1',
    maxAttempts: MAX_ATTEMPTS,
    test: false,
    scheduledAt: T0,
    firstAttemptAt: T0,
    ...target,
    ...description,
  },
};
const ok: AttemptResult = { ok: true, httpStatus: 200, responseBody: 'ok', durationMs: 12.4 };
const fail = (httpStatus: number | null = 500, errorMessage = 'HTTP 500'): AttemptResult => ({
  ok: false,
  httpStatus,
  errorMessage,
  responseBody: null,
  durationMs: 7,
  retryAfterS: null,
});
const record = (attempt: number, result: AttemptResult, now = T0): WebhookDeliveryCommand => ({
  type: 'RecordAttempt',
  data: { deliveryId: 'whd_1', attempt, result },
  metadata: at(now),
});
const failed = (attempt: number, attemptedAt: string, nextAttemptAt: string | null): WebhookDeliveryEvent => ({
  type: 'WebhookAttemptFailed',
  data: {
    deliveryId: 'whd_1',
    accountId: 'acc_1',
    attempt,
    httpStatus: 500,
    errorMessage: 'HTTP 500',
    responseBody: null,
    durationMs: 7,
    attemptedAt,
    nextAttemptAt,
  },
});
const plus = (iso: string, s: number) => new Date(Date.parse(iso) + s * 1000).toISOString();

describe('Webhook delivery decider', () => {
  it('schedules the first attempt at once', () => given([]).when(schedule).then([scheduled]));
  it('schedules a source event once (the same delivery id again is a no-op)', () => given([scheduled]).when(schedule).then([]));

  describe('the first attempt handed over at scheduling (docs/webhooks.md#the-first-attempt-handed-over)', () => {
    const claim = { by: 'wrk_1', until: '2026-01-01T00:02:30.000Z' };
    const claimed = (test: boolean): WebhookDeliveryCommand => ({
      ...schedule,
      data: { ...schedule.data, test, firstAttemptClaim: claim },
    });
    it("records the worker's claim on the scheduled delivery", () =>
      given([])
        .when(claimed(false))
        .then([{ ...scheduled, data: { ...scheduled.data, firstAttemptClaim: claim } } as WebhookDeliveryEvent]));
    it('leaves it out of a test send, which has no attempt to claim', () =>
      given([])
        .when(claimed(true))
        .then([{ ...scheduled, data: { ...scheduled.data, test: true } } as WebhookDeliveryEvent]));
    it('schedules nothing the second time, claim or not', () => given([scheduled]).when(claimed(false)).then([]));
  });

  it('records a 2xx attempt and the delivery as succeeded', () =>
    given([scheduled])
      .when(record(1, ok))
      .then([
        {
          type: 'WebhookAttemptSucceeded',
          data: {
            deliveryId: 'whd_1',
            accountId: 'acc_1',
            attempt: 1,
            httpStatus: 200,
            responseBody: 'ok',
            durationMs: 12,
            attemptedAt: T0,
          },
        },
        {
          type: 'WebhookDeliverySucceeded',
          data: { deliveryId: 'whd_1', accountId: 'acc_1', ...target, attempts: 1, test: false, deliveredAt: T0 },
        },
      ]));

  it('records a failed attempt with the next attempt 5 minutes later', () =>
    given([scheduled])
      .when(record(1, fail()))
      .then([failed(1, T0, plus(T0, 300))]));

  it('walks the whole schedule and fails for good after the sixth attempt', () => {
    const delays = [300, 1800, 7200, 21600, 43200];
    const past: WebhookDeliveryEvent[] = [scheduled];
    let now = T0;
    for (let attempt = 1; attempt <= 5; attempt++) {
      const next = plus(now, delays[attempt - 1]!);
      past.push(failed(attempt, now, next));
      now = next;
    }
    given(past)
      .when(record(6, fail(), now))
      .then([
        failed(6, now, null),
        {
          type: 'WebhookDeliveryFailed',
          data: { deliveryId: 'whd_1', accountId: 'acc_1', ...target, attempts: 6, test: false, reason: 'exhausted', failedAt: now },
        },
      ]);
  });

  it('treats a repeated recording of the same attempt as a no-op', () =>
    given([scheduled, failed(1, T0, plus(T0, 300))])
      .when(record(1, ok))
      .then([]));

  it('refuses an attempt out of order', () => given([scheduled]).when(record(3, ok)).thenThrows('CONCURRENCY_CONFLICT'));

  it('records nothing more once finished', () => {
    const done: WebhookDeliveryEvent[] = [
      scheduled,
      ...webhookDeliveryDecider.decide(record(1, ok), webhookDeliveryDecider.evolve(webhookDeliveryDecider.initialState(), scheduled)),
    ];
    given(done).when(record(2, fail())).then([]);
  });

  it('keeps 1 KiB of a response body and 500 characters of an error', () => {
    const r = webhookDeliveryDecider.decide(
      record(1, { ...fail(502, 'e'.repeat(900)), responseBody: 'x'.repeat(5000) }),
      webhookDeliveryDecider.evolve(webhookDeliveryDecider.initialState(), scheduled),
    );
    const d = r[0]!.data as { responseBody: string; errorMessage: string };
    if (d.responseBody.length !== 1024 || d.errorMessage.length !== 500)
      throw new Error(`kept ${d.responseBody.length} / ${d.errorMessage.length}`);
  });

  it('honours a one-attempt delivery (test sends): fails for good at once', () => {
    const oneShot: WebhookDeliveryEvent = { ...scheduled, data: { ...scheduled.data, maxAttempts: 1, test: true } } as WebhookDeliveryEvent;
    given([oneShot])
      .when(record(1, fail()))
      .then([
        failed(1, T0, null),
        {
          type: 'WebhookDeliveryFailed',
          data: { deliveryId: 'whd_1', accountId: 'acc_1', ...target, attempts: 1, test: true, reason: 'exhausted', failedAt: T0 },
        },
      ]);
  });

  it('abandons a pending delivery whose webhook is gone', () =>
    given([scheduled])
      .when({ type: 'AbandonDelivery', data: { deliveryId: 'whd_1', reason: 'webhook_deleted' }, metadata: at(T0) })
      .then([
        {
          type: 'WebhookDeliveryFailed',
          data: { deliveryId: 'whd_1', accountId: 'acc_1', ...target, attempts: 0, test: false, reason: 'webhook_deleted', failedAt: T0 },
        },
      ]));

  it("treats another account's delivery as missing", () =>
    given([scheduled])
      .when({ ...record(1, ok), metadata: { now: T0, accountId: 'acc_2' } })
      .thenThrows('WEBHOOK_DELIVERY_NOT_FOUND'));

  describe('sending a finished delivery again', () => {
    const T1 = '2026-01-02T00:00:00.000Z';
    const retry = (source: 'retry' | 'recover' = 'retry'): WebhookDeliveryCommand => ({
      type: 'RetryDelivery',
      data: { deliveryId: 'whd_1', source },
      metadata: at(T1),
    });
    const exhaustedRun = (): WebhookDeliveryEvent[] => {
      const past: WebhookDeliveryEvent[] = [scheduled];
      for (let attempt = 1; attempt <= 6; attempt++) past.push(failed(attempt, T0, attempt < 6 ? T0 : null));
      past.push({
        type: 'WebhookDeliveryFailed',
        data: { deliveryId: 'whd_1', accountId: 'acc_1', ...target, attempts: 6, test: false, reason: 'exhausted', failedAt: T0 },
      });
      return past;
    };
    const requested = (
      previousStatus: 'succeeded' | 'failed',
      attempt: number,
      source: 'retry' | 'recover' = 'retry',
    ): WebhookDeliveryEvent => ({
      type: 'WebhookDeliveryRetryRequested',
      data: { deliveryId: 'whd_1', accountId: 'acc_1', ...target, attempt, previousStatus, source, test: false, requestedAt: T1 },
    });

    it('adds one attempt, due at once, to a failed delivery', () =>
      given(exhaustedRun())
        .when(retry('recover'))
        .then([requested('failed', 7, 'recover')]));

    it('sends a delivered one again too', () =>
      given([
        scheduled,
        {
          type: 'WebhookAttemptSucceeded',
          data: {
            deliveryId: 'whd_1',
            accountId: 'acc_1',
            attempt: 1,
            httpStatus: 200,
            responseBody: 'ok',
            durationMs: 5,
            attemptedAt: T0,
          },
        },
        {
          type: 'WebhookDeliverySucceeded',
          data: { deliveryId: 'whd_1', accountId: 'acc_1', ...target, attempts: 1, test: false, deliveredAt: T0 },
        },
      ])
        .when(retry())
        .then([requested('succeeded', 2)]));

    it('refuses while the delivery is still being attempted', () =>
      given([scheduled]).when(retry()).thenThrows('WEBHOOK_DELIVERY_PENDING'));

    it("treats another account's delivery as missing", () =>
      given(exhaustedRun())
        .when({ ...retry(), metadata: { now: T1, accountId: 'acc_2' } })
        .thenThrows('WEBHOOK_DELIVERY_NOT_FOUND'));

    it('ends the delivery after the one attempt fails, as a failed retry (which the webhook does not count again)', () =>
      given([...exhaustedRun(), requested('failed', 7)])
        .when(record(7, fail(), T1))
        .then([
          failed(7, T1, null),
          {
            type: 'WebhookDeliveryFailed',
            data: { deliveryId: 'whd_1', accountId: 'acc_1', ...target, attempts: 7, test: false, reason: 'retry_failed', failedAt: T1 },
          },
        ]));

    it('ends the delivery delivered when the attempt succeeds', () =>
      given([...exhaustedRun(), requested('failed', 7)])
        .when(record(7, ok, T1))
        .then([
          {
            type: 'WebhookAttemptSucceeded',
            data: {
              deliveryId: 'whd_1',
              accountId: 'acc_1',
              attempt: 7,
              httpStatus: 200,
              responseBody: 'ok',
              durationMs: 12,
              attemptedAt: T1,
            },
          },
          {
            type: 'WebhookDeliverySucceeded',
            data: { deliveryId: 'whd_1', accountId: 'acc_1', ...target, attempts: 7, test: false, deliveredAt: T1 },
          },
        ]));
  });
});

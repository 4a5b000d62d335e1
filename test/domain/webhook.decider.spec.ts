import { type WebhookCommand, type WebhookEvent, webhookDecider } from '../../domain/webhook/webhook.decider.js';
import { DISABLE_AFTER_EXHAUSTED, WARN_AFTER_EXHAUSTED } from '../../domain/webhook/webhook.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(webhookDecider);
const metadata = { now: '2026-01-01T00:00:00.000Z', accountId: 'acc_1' };
const settings = {
  url: 'https://hooks.example.com/in',
  contextLimit: 10,
  timeout: 30,
  secret: 'whsec_a',
  events: ['agent.message', 'agent.reaction', 'agent.call_ended'] as readonly string[],
};
const configure = (over: Partial<typeof settings> = {}, m = metadata): WebhookCommand => ({
  type: 'ConfigureWebhook',
  data: { webhookId: 'whk_new', agentId: null, ...settings, ...over },
  metadata: m,
});
const created: WebhookEvent = {
  type: 'WebhookCreated',
  data: { webhookId: 'whk_1', accountId: 'acc_1', agentId: null, ...settings, createdAt: metadata.now },
};
const del: WebhookCommand = { type: 'DeleteWebhook', data: {}, metadata };
const deleted: WebhookEvent = {
  type: 'WebhookDeleted',
  data: { webhookId: 'whk_1', accountId: 'acc_1', agentId: null, deletedAt: metadata.now },
};
const pos = (n: number) => `${String(n).padStart(20, '0')}/${String(n).padStart(20, '0')}`;
const outcome = (deliveryId: string, o: 'delivered' | 'exhausted', n: number, webhookId = 'whk_1'): WebhookCommand => ({
  type: 'RecordDeliveryOutcome',
  data: { webhookId, deliveryId, outcome: o, position: pos(n) },
  metadata,
});
const exhausted = (deliveryId: string, n: number, consecutiveFailures: number): WebhookEvent => ({
  type: 'WebhookDeliveryExhausted',
  data: { webhookId: 'whk_1', accountId: 'acc_1', deliveryId, consecutiveFailures, position: pos(n), at: metadata.now },
});

describe('Webhook decider', () => {
  describe('configuration', () => {
    it('creates a webhook with the given id, settings and secret', () =>
      given([])
        .when(configure())
        .then([
          {
            type: 'WebhookCreated',
            data: { webhookId: 'whk_new', accountId: 'acc_1', agentId: null, ...settings, createdAt: metadata.now },
          },
        ]));

    it('updates an existing webhook in place: same id, new settings and secret', () =>
      given([created])
        .when(configure({ url: 'https://other.example.com/x', secret: 'whsec_b', contextLimit: 0 }))
        .then([
          {
            type: 'WebhookUpdated',
            data: {
              webhookId: 'whk_1',
              accountId: 'acc_1',
              agentId: null,
              url: 'https://other.example.com/x',
              contextLimit: 0,
              timeout: 30,
              secret: 'whsec_b',
              events: settings.events,
              updatedAt: metadata.now,
            },
          },
        ]));

    it('starts a new webhook (new id) after a delete', () =>
      given([created, deleted])
        .when(configure())
        .then([
          {
            type: 'WebhookCreated',
            data: { webhookId: 'whk_new', accountId: 'acc_1', agentId: null, ...settings, createdAt: metadata.now },
          },
        ]));

    it('records the events the webhook chose', () =>
      given([created])
        .when(configure({ events: ['agent.message', 'agent.created'] }))
        .then([
          {
            type: 'WebhookUpdated',
            data: {
              webhookId: 'whk_1',
              accountId: 'acc_1',
              agentId: null,
              ...settings,
              events: ['agent.message', 'agent.created'],
              updatedAt: metadata.now,
            },
          },
        ]));
    it('refuses an empty list of events', () =>
      given([])
        .when(configure({ events: [] }))
        .thenThrows('VALIDATION_ERROR'));
    it('refuses a context limit above 50', () =>
      given([])
        .when(configure({ contextLimit: 51 }))
        .thenThrows('VALIDATION_ERROR'));
    it('refuses a timeout below 5 seconds', () =>
      given([])
        .when(configure({ timeout: 4 }))
        .thenThrows('VALIDATION_ERROR'));
    it('refuses a URL that is not http or https', () =>
      given([])
        .when(configure({ url: 'ftp://example.com/x' }))
        .thenThrows('VALIDATION_ERROR'));
    it("treats another account's webhook as missing", () =>
      given([created])
        .when(configure({}, { ...metadata, accountId: 'acc_2' }))
        .thenThrows('WEBHOOK_NOT_FOUND'));
  });

  describe('delete', () => {
    it('deletes a configured webhook', () => given([created]).when(del).then([deleted]));
    it('answers WEBHOOK_NOT_FOUND when none is configured', () => given([]).when(del).thenThrows('WEBHOOK_NOT_FOUND'));
    it('answers WEBHOOK_NOT_FOUND for a second delete', () => given([created, deleted]).when(del).thenThrows('WEBHOOK_NOT_FOUND'));
  });

  describe('status: active -> failing -> disabled, and back', () => {
    it('stays active (no event) when a delivery succeeds', () =>
      given([created])
        .when(outcome('d1', 'delivered', 1))
        .then([]));

    it('becomes failing when a delivery exhausts its attempts', () =>
      given([created])
        .when(outcome('d1', 'exhausted', 1))
        .then([exhausted('d1', 1, 1)]));

    it('recovers to active when a delivery succeeds while failing', () =>
      given([created, exhausted('d1', 1, 1)])
        .when(outcome('d2', 'delivered', 2))
        .then([
          {
            type: 'WebhookRecovered',
            data: { webhookId: 'whk_1', accountId: 'acc_1', deliveryId: 'd2', position: pos(2), recoveredAt: metadata.now },
          },
        ]));

    it(`is disabled at the ${DISABLE_AFTER_EXHAUSTED}th exhausted delivery in a row`, () => {
      const past = [created, ...Array.from({ length: DISABLE_AFTER_EXHAUSTED - 1 }, (_, i) => exhausted(`d${i + 1}`, i + 1, i + 1))];
      given(past)
        .when(outcome('d9', 'exhausted', 9))
        .then([
          exhausted('d9', 9, DISABLE_AFTER_EXHAUSTED),
          {
            type: 'WebhookDisabled',
            data: { webhookId: 'whk_1', accountId: 'acc_1', consecutiveFailures: DISABLE_AFTER_EXHAUSTED, disabledAt: metadata.now },
          },
        ]);
    });

    it('counts consecutive failures from zero again after a recovery', () => {
      const recovered: WebhookEvent = {
        type: 'WebhookRecovered',
        data: { webhookId: 'whk_1', accountId: 'acc_1', deliveryId: 'd2', position: pos(2), recoveredAt: metadata.now },
      };
      given([created, exhausted('d1', 1, 1), recovered])
        .when(outcome('d3', 'exhausted', 3))
        .then([exhausted('d3', 3, 1)]);
    });

    it('ignores outcomes while disabled; only a new configure re-enables it', () => {
      const disabled: WebhookEvent[] = [
        created,
        exhausted('d1', 1, DISABLE_AFTER_EXHAUSTED),
        {
          type: 'WebhookDisabled',
          data: { webhookId: 'whk_1', accountId: 'acc_1', consecutiveFailures: DISABLE_AFTER_EXHAUSTED, disabledAt: metadata.now },
        },
      ];
      given(disabled)
        .when(outcome('d2', 'delivered', 2))
        .then([]);
      given(disabled)
        .when(outcome('d3', 'exhausted', 3))
        .then([]);
      given(disabled)
        .when(configure({ secret: 'whsec_c' }))
        .then([
          {
            type: 'WebhookUpdated',
            data: { webhookId: 'whk_1', accountId: 'acc_1', agentId: null, ...settings, secret: 'whsec_c', updatedAt: metadata.now },
          },
        ]);
    });

    it('ignores a replayed outcome (at or before the last position counted)', () => {
      given([created, exhausted('d1', 5, 1)])
        .when(outcome('d1', 'exhausted', 5))
        .then([]);
      given([created, exhausted('d1', 5, 1)])
        .when(outcome('d0', 'delivered', 4))
        .then([]);
    });

    it('ignores outcomes of an older webhook of the same scope', () =>
      given([created])
        .when(outcome('d1', 'exhausted', 1, 'whk_old'))
        .then([]));

    it('ignores outcomes when no webhook is configured', () =>
      given([created, deleted])
        .when(outcome('d1', 'exhausted', 1))
        .then([]));
  });

  describe('the warning before a webhook is disabled', () => {
    const warned: WebhookEvent = {
      type: 'WebhookDisableWarned',
      data: {
        webhookId: 'whk_1',
        accountId: 'acc_1',
        agentId: null,
        url: settings.url,
        consecutiveFailures: WARN_AFTER_EXHAUSTED,
        disableAfter: DISABLE_AFTER_EXHAUSTED,
        warnedAt: metadata.now,
      },
    };
    const inARow = (n: number) => Array.from({ length: n }, (_, i) => exhausted(`d${i + 1}`, i + 1, i + 1));

    it('warns at the exhausted delivery before the one that disables', () =>
      given([created, ...inARow(WARN_AFTER_EXHAUSTED - 1)])
        .when(outcome('d8', 'exhausted', 8))
        .then([exhausted('d8', 8, WARN_AFTER_EXHAUSTED), warned]));

    it('does not warn earlier', () =>
      given([created, ...inARow(WARN_AFTER_EXHAUSTED - 2)])
        .when(outcome('d8', 'exhausted', 8))
        .then([exhausted('d8', 8, WARN_AFTER_EXHAUSTED - 1)]));

    it('records where the warning was mailed, once', () => {
      const mail: WebhookCommand = { type: 'RecordWarningMail', data: { warningId: 'evt_warn', to: 'ada@example.com' }, metadata };
      const mailed: WebhookEvent = {
        type: 'WebhookWarningMailed',
        data: { webhookId: 'whk_1', accountId: 'acc_1', warningId: 'evt_warn', to: 'ada@example.com', mailedAt: metadata.now },
      };
      given([created, ...inARow(WARN_AFTER_EXHAUSTED), warned])
        .when(mail)
        .then([mailed]);
      given([created, ...inARow(WARN_AFTER_EXHAUSTED), warned, mailed])
        .when(mail)
        .then([]);
    });

    it('records a warning that had no address to go to', () =>
      given([created, warned])
        .when({ type: 'RecordWarningMail', data: { warningId: 'evt_warn', to: null }, metadata })
        .then([
          {
            type: 'WebhookWarningMailed',
            data: { webhookId: 'whk_1', accountId: 'acc_1', warningId: 'evt_warn', to: null, mailedAt: metadata.now },
          },
        ]));
  });
});

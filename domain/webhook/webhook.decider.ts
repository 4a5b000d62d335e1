import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import {
  CONTEXT_LIMIT,
  DISABLE_AFTER_EXHAUSTED,
  MAX_WEBHOOK_EVENTS,
  TIMEOUT_SECONDS,
  WARN_AFTER_EXHAUSTED,
  type WebhookStatus,
} from './webhook.js';

/** The stream of a webhook configuration: the account's master on `webhook-<accountId>`, an agent's own on `webhook-<agentId>`: `<category>-<id>` (docs/event-store.md#aggregates-and-events). */
export const webhookStream = (id: string) => `webhook-${id}`;

/**
 * A webhook configuration. One aggregate per scope: the account's master webhook lives on
 * `webhook-<accountId>`, an agent's own webhook on `webhook-<agentId>`. Create-or-update keeps the webhook id;
 * after a delete the next configure starts a new webhook (new id).
 */
export type WebhookSettings = Readonly<{
  url: string;
  contextLimit: number;
  timeout: number;
  secret: string;
  /** public event names it receives (`*`: all); events recorded before this field existed read as the default */
  events: readonly string[];
}>;

export type WebhookCommand =
  /** `webhookId` is used only when a new webhook starts; `agentId` null for the account's master webhook. */
  | Command<'ConfigureWebhook', { webhookId: string; agentId: string | null } & WebhookSettings>
  | Command<'DeleteWebhook', Record<string, never>>
  /**
   * Outcome of a finished delivery, fed back by the health reactor. `position` is a sortable key of the
   * outcome event's place in the global log: outcomes at or before the last one counted are replays.
   */
  | Command<'RecordDeliveryOutcome', { webhookId: string; deliveryId: string; outcome: 'delivered' | 'exhausted'; position: string }>
  /**
   * The outcome of the e-mail about a disable warning (the warning's event id), fed back by the warning mailer:
   * the address it went to, or null when the account has none.
   */
  | Command<'RecordWarningMail', { warningId: string; to: string | null }>;

export type WebhookEvent =
  | Event<'WebhookCreated', { webhookId: string; accountId: string; agentId: string | null; createdAt: string } & WebhookSettings>
  /** Every configure of an existing webhook: new settings, a new secret, and the status back to active. */
  | Event<'WebhookUpdated', { webhookId: string; accountId: string; agentId: string | null; updatedAt: string } & WebhookSettings>
  | Event<'WebhookDeleted', { webhookId: string; accountId: string; agentId: string | null; deletedAt: string }>
  /** A delivery exhausted its attempts: the webhook is `failing`. */
  | Event<
      'WebhookDeliveryExhausted',
      { webhookId: string; accountId: string; deliveryId: string; consecutiveFailures: number; position: string; at: string }
    >
  | Event<'WebhookDisabled', { webhookId: string; accountId: string; consecutiveFailures: number; disabledAt: string }>
  /** One more exhausted delivery in a row will disable the webhook: the account is warned. */
  | Event<
      'WebhookDisableWarned',
      {
        webhookId: string;
        accountId: string;
        agentId: string | null;
        url: string;
        consecutiveFailures: number;
        disableAfter: number;
        warnedAt: string;
      }
    >
  /** The warning's e-mail went out (`to`), or could not (`to` null: the account has no address). */
  | Event<'WebhookWarningMailed', { webhookId: string; accountId: string; warningId: string; to: string | null; mailedAt: string }>
  /** A delivery succeeded while `failing`: the webhook is `active` again. */
  | Event<'WebhookRecovered', { webhookId: string; accountId: string; deliveryId: string; position: string; recoveredAt: string }>;

export const webhookEventTypes = [
  'WebhookCreated',
  'WebhookUpdated',
  'WebhookDeleted',
  'WebhookDeliveryExhausted',
  'WebhookDisabled',
  'WebhookRecovered',
  'WebhookDisableWarned',
  'WebhookWarningMailed',
] as const satisfies readonly WebhookEvent['type'][];

export type WebhookState =
  | { status: 'none'; lastPosition: string }
  | {
      status: WebhookStatus;
      webhookId: string;
      accountId: string;
      agentId: string | null;
      settings: WebhookSettings;
      consecutiveFailures: number;
      lastPosition: string;
      /** the id of the latest disable warning whose e-mail outcome is recorded */
      lastWarningMailed?: string | null;
    }
  | { status: 'deleted'; webhookId: string; accountId: string; agentId: string | null; lastPosition: string };

const notFound = () => new DomainError('WEBHOOK_NOT_FOUND', 'No webhook is configured');

function validate(s: WebhookSettings): void {
  const errors: { field: string; message: string; type: string }[] = [];
  if (!Number.isInteger(s.contextLimit) || s.contextLimit < CONTEXT_LIMIT.min || s.contextLimit > CONTEXT_LIMIT.max) {
    errors.push({
      field: 'contextLimit',
      message: `must be an integer from ${CONTEXT_LIMIT.min} to ${CONTEXT_LIMIT.max}`,
      type: 'value_error',
    });
  }
  if (!Number.isInteger(s.timeout) || s.timeout < TIMEOUT_SECONDS.min || s.timeout > TIMEOUT_SECONDS.max) {
    errors.push({
      field: 'timeout',
      message: `must be an integer from ${TIMEOUT_SECONDS.min} to ${TIMEOUT_SECONDS.max} seconds`,
      type: 'value_error',
    });
  }
  if (
    !Array.isArray(s.events) ||
    s.events.length === 0 ||
    s.events.length > MAX_WEBHOOK_EVENTS ||
    !s.events.every((x) => typeof x === 'string' && x.length > 0)
  ) {
    errors.push({ field: 'events', message: `must list 1 to ${MAX_WEBHOOK_EVENTS} event names`, type: 'value_error' });
  }
  if (!/^https?:\/\/[^\s]+$/i.test(s.url)) errors.push({ field: 'url', message: 'must be an http or https URL', type: 'value_error' });
  if (errors.length) throw new DomainError('VALIDATION_ERROR', 'Invalid webhook configuration', errors);
}

export const webhookDecider: Decider<WebhookCommand, WebhookEvent, WebhookState> = {
  initialState: () => ({ status: 'none', lastPosition: '' }),

  decide: (cmd, s) => {
    const { now, accountId } = cmd.metadata;
    // a webhook of another account is indistinguishable from a missing one
    const live = s.status === 'active' || s.status === 'failing' || s.status === 'disabled' ? s : null;
    if (live && live.accountId !== accountId && cmd.type !== 'RecordDeliveryOutcome' && cmd.type !== 'RecordWarningMail') throw notFound();
    switch (cmd.type) {
      case 'ConfigureWebhook': {
        const { webhookId, agentId, ...settings } = cmd.data;
        validate(settings);
        if (!live) return [{ type: 'WebhookCreated', data: { webhookId, accountId, agentId, ...settings, createdAt: now } }];
        return [
          { type: 'WebhookUpdated', data: { webhookId: live.webhookId, accountId, agentId: live.agentId, ...settings, updatedAt: now } },
        ];
      }
      case 'DeleteWebhook':
        if (!live) throw notFound();
        return [{ type: 'WebhookDeleted', data: { webhookId: live.webhookId, accountId, agentId: live.agentId, deletedAt: now } }];
      case 'RecordDeliveryOutcome': {
        const { webhookId, deliveryId, outcome, position } = cmd.data;
        // outcomes of an older (deleted) webhook, and replays of outcomes already counted, change nothing
        if (!live || live.webhookId !== webhookId || position <= s.lastPosition) return [];
        if (outcome === 'delivered') {
          if (live.status !== 'failing') return []; // active stays active; disabled is left only by a new configure
          return [{ type: 'WebhookRecovered', data: { webhookId, accountId: live.accountId, deliveryId, position, recoveredAt: now } }];
        }
        if (live.status === 'disabled') return [];
        const consecutiveFailures = live.consecutiveFailures + 1;
        const events: WebhookEvent[] = [
          {
            type: 'WebhookDeliveryExhausted',
            data: { webhookId, accountId: live.accountId, deliveryId, consecutiveFailures, position, at: now },
          },
        ];
        if (consecutiveFailures === WARN_AFTER_EXHAUSTED) {
          events.push({
            type: 'WebhookDisableWarned',
            data: {
              webhookId,
              accountId: live.accountId,
              agentId: live.agentId,
              url: live.settings.url,
              consecutiveFailures,
              disableAfter: DISABLE_AFTER_EXHAUSTED,
              warnedAt: now,
            },
          });
        }
        if (consecutiveFailures >= DISABLE_AFTER_EXHAUSTED) {
          events.push({ type: 'WebhookDisabled', data: { webhookId, accountId: live.accountId, consecutiveFailures, disabledAt: now } });
        }
        return events;
      }
      case 'RecordWarningMail': {
        if (s.status === 'none' || (live?.lastWarningMailed ?? null) === cmd.data.warningId) return [];
        const owner = live ?? (s.status === 'deleted' ? s : null);
        if (!owner) return [];
        return [
          {
            type: 'WebhookWarningMailed',
            data: { webhookId: owner.webhookId, accountId: owner.accountId, warningId: cmd.data.warningId, to: cmd.data.to, mailedAt: now },
          },
        ];
      }
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'WebhookCreated': {
        const { webhookId, accountId, agentId, url, contextLimit, timeout, secret, events } = e.data;
        return {
          status: 'active',
          webhookId,
          accountId,
          agentId,
          settings: { url, contextLimit, timeout, secret, events },
          consecutiveFailures: 0,
          lastPosition: s.lastPosition,
        };
      }
      case 'WebhookUpdated': {
        if (s.status === 'none' || s.status === 'deleted') return s;
        const { url, contextLimit, timeout, secret, events } = e.data;
        return { ...s, status: 'active', settings: { url, contextLimit, timeout, secret, events }, consecutiveFailures: 0 };
      }
      case 'WebhookDeleted':
        return s.status === 'none' || s.status === 'deleted'
          ? s
          : { status: 'deleted', webhookId: s.webhookId, accountId: s.accountId, agentId: s.agentId, lastPosition: s.lastPosition };
      case 'WebhookDeliveryExhausted':
        return s.status === 'none' || s.status === 'deleted'
          ? { ...s, lastPosition: e.data.position }
          : {
              ...s,
              status: s.status === 'disabled' ? 'disabled' : 'failing',
              consecutiveFailures: e.data.consecutiveFailures,
              lastPosition: e.data.position,
            };
      case 'WebhookDisabled':
        return s.status === 'none' || s.status === 'deleted' ? s : { ...s, status: 'disabled' };
      case 'WebhookRecovered':
        return s.status === 'none' || s.status === 'deleted'
          ? { ...s, lastPosition: e.data.position }
          : { ...s, status: 'active', consecutiveFailures: 0, lastPosition: e.data.position };
      case 'WebhookDisableWarned':
        return s;
      case 'WebhookWarningMailed':
        return s.status === 'none' || s.status === 'deleted' ? s : { ...s, lastWarningMailed: e.data.warningId };
      default:
        return s;
    }
  },
};

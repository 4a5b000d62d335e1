import { deliveryHistory } from '../../application/webhooks/delivery.history.js';
import { DeliveryReplay } from '../../application/webhooks/delivery-replay.js';
import { WebhookEventRegistry } from '../../application/webhooks/registry.js';
import type { WebhookSenderPort } from '../../application/webhooks/webhook.port.js';
import { WebhookCommands } from '../../application/webhooks/webhook-commands.js';
import { WebhookDeliverer } from '../../application/webhooks/webhook-deliverer.js';
import { WebhookDispatcher } from '../../application/webhooks/webhook-dispatcher.js';
import { WebhookHealthReactor } from '../../application/webhooks/webhook-health.js';
import { WebhookTestSend } from '../../application/webhooks/webhook-test-send.js';
import { WebhookWarningMailer } from '../../application/webhooks/webhook-warning-mailer.js';
import type { WebhookErrorCode } from '../../domain/webhook/errors.js';
import { KyselyAccountAddresses } from '../../projections/accounts/account-address.queries.js';
import { KyselyWebhookQueries } from '../../projections/webhooks/webhook.queries.js';
import { webhookDeliveriesProjector } from '../../projections/webhooks/webhook-deliveries.projector.js';
import { webhookNoticesProjector } from '../../projections/webhooks/webhook-notices.projector.js';
import { webhooksProjector } from '../../projections/webhooks/webhooks.projector.js';
import { secretKeys } from '../adapters/secret-keys.js';
import { AGENTS } from '../agents/tokens.js';
import type { Capability, Resolve } from '../capabilities/capability.js';
import type { Config } from '../config/config.js';
import * as m010 from '../db/migrations/010-webhooks.js';
import * as m031 from '../db/migrations/031-webhook-events.js';
import * as m121 from '../db/migrations/121-webhook-notices.js';
import { httpError } from '../http/errors.js';
import { type Destinations, WebhookUrlPolicy } from '../http-client/address-policy.js';
import { PLATFORM } from '../platform/tokens.js';
import { isTransient, WorkIsolation } from '../reactors/isolation.js';
import { SIGNUP } from '../signup/tokens.js';
import type { BackgroundWorker } from '../workers.js';
import { type DeliveryWorkerOptions, WebhookDeliveryWorker } from './delivery-worker.js';
import { KyselyDueAttempts } from './due-attempts.js';
import { bringsDueAttempts } from './due-wakeups.js';
import { HttpWebhookSender } from './http-sender.js';
import { RandomWebhookSecrets } from './secrets.js';
import { WEBHOOKS } from './tokens.js';
import { webhookRoutes } from './webhooks.routes.js';

/** Where webhooks (and voice turns) may be sent (docs/security.md). */
export const destinations = (cfg: Config): Destinations =>
  cfg.WEBHOOK_ALLOW_PRIVATE ? 'any' : cfg.PROVIDER_MODE === 'sandbox' ? 'public-or-loopback' : 'public';

/** A delivery worker over the runtime's stores; `sender` replaces the HTTP sender (tests inject faults). */
export function createDeliveryWorker(
  r: Resolve,
  o: Partial<DeliveryWorkerOptions> & { sender?: WebhookSenderPort } = {},
): WebhookDeliveryWorker {
  const cfg = r(PLATFORM.Config);
  const deliverer = new WebhookDeliverer(
    r(PLATFORM.Executor),
    r(PLATFORM.EventStore),
    r(PLATFORM.Ids),
    // the signature's timestamp is checked against the receiver's own clock: never the sandbox clock's offset
    r(PLATFORM.BaseClock),
    r(WEBHOOKS.Queries),
    o.sender ?? r(WEBHOOKS.Sender),
    r(PLATFORM.Logger),
    { defaultDeadlineMs: cfg.WEBHOOK_DELIVERY_TIMEOUT_SECONDS * 1000, isTransient },
  );
  const timeline = new KyselyDueAttempts(r(PLATFORM.ReadDb));
  const isolation = new WorkIsolation(r(PLATFORM.ReadDb), r(PLATFORM.Logger));
  return new WebhookDeliveryWorker(timeline, deliverer, r(PLATFORM.Clock), r(PLATFORM.Logger), {
    isolate: async (c, err) => {
      await isolation.isolate(
        { consumer: 'webhook-delivery', item: `${c.deliveryId}#${c.attempt}`, accountId: c.accountId, tries: 1 },
        err,
      );
      await timeline.park(c.deliveryId, c.attempt, 'webhook-delivery');
    },
    concurrency: o.concurrency ?? Math.max(1, cfg.WEBHOOK_CONCURRENCY),
    leaseMs: o.leaseMs ?? cfg.WEBHOOK_LEASE_SECONDS * 1000,
    pollIntervalMs: o.pollIntervalMs ?? cfg.WEBHOOK_POLL_INTERVAL_MS,
    ...(o.stopGraceMs !== undefined ? { stopGraceMs: o.stopGraceMs } : {}),
    ...(o.workerId !== undefined ? { workerId: o.workerId } : {}),
  });
}

/**
 * The delivery worker, woken when a batch of the delivery timeline's projector (in this process or another) may have
 * put an attempt on the timeline (`bringsDueAttempts`).
 */
function deliveryWorker(r: Resolve): BackgroundWorker {
  const worker = r(WEBHOOKS.Worker);
  let unsubscribe: () => void = () => {};
  return {
    name: 'webhook-delivery',
    async start() {
      await worker.start();
      unsubscribe = r(PLATFORM.AppendSignals).listenProjected((n) => {
        if (n.projector === webhookDeliveriesProjector.name && bringsDueAttempts(n)) worker.wake();
      });
    },
    async stop() {
      unsubscribe();
      await worker.stop();
    },
  };
}

/**
 * Webhooks (docs/webhooks.md): master and per-agent configuration, the dispatch reactor (domain events ->
 * scheduled deliveries, through every capability's webhook mappings), the delivery timeline and its worker
 * (unless WEBHOOK_CONCURRENCY=0), the health reactor (outcomes -> webhook status), and test sends.
 */
export const webhooks = {
  name: 'webhooks',
  bind: (b, cfg) => {
    // signing secrets are sealed at rest and opened only by the query adapter (answers and the sender)
    const secrets = new RandomWebhookSecrets(secretKeys(cfg.SECRETS_KEY).webhookSecrets);
    b.value(WEBHOOKS.Secrets, secrets);
    b.factory(WEBHOOKS.Queries, (r) => {
      const waiter = r(PLATFORM.ReadModelWaiter);
      return new KyselyWebhookQueries(
        r(PLATFORM.ReadDb),
        (projector) => waiter.reflected(projector),
        (s) => secrets.open(s),
        r(PLATFORM.KeptReads)(webhooksProjector.name),
      );
    });
    b.value(WEBHOOKS.Sender, new HttpWebhookSender({ destinations: destinations(cfg) }));
    b.value(WEBHOOKS.UrlPolicy, new WebhookUrlPolicy(destinations(cfg)));
    // WEBHOOKS.ConversationContext (history, state, contact of payloads) is bound by the messaging capability
    b.factory(
      WEBHOOKS.Commands,
      (r) =>
        new WebhookCommands(
          r(PLATFORM.Executor),
          r(PLATFORM.Ids),
          r(WEBHOOKS.Queries),
          r(AGENTS.Queries),
          r(WEBHOOKS.Secrets),
          r(WEBHOOKS.UrlPolicy),
          {
            defaultDeadlineMs: cfg.WEBHOOK_DELIVERY_TIMEOUT_SECONDS * 1000,
            knownEvents: r(PLATFORM.WebhookMappings).map((m) => m.event),
          },
        ),
    );
    if (cfg.WEBHOOK_CONCURRENCY > 0) b.factory(WEBHOOKS.Worker, (r) => createDeliveryWorker(r));
    b.factory(WEBHOOKS.Replay, (r) => new DeliveryReplay(r(PLATFORM.Executor), r(WEBHOOKS.Queries), r(PLATFORM.ReadModels)));
  },
  routes: {
    v1: (api, r) =>
      webhookRoutes(api, {
        commands: r(WEBHOOKS.Commands),
        replay: r(WEBHOOKS.Replay),
        queries: r(WEBHOOKS.Queries),
        agents: r(AGENTS.Queries),
        clock: r(PLATFORM.Clock),
      }),
  },
  projectors: [webhooksProjector, webhookDeliveriesProjector, webhookNoticesProjector],
  histories: () => [
    {
      view: deliveryHistory,
      path: '/v1/webhooks/deliveries/:delivery_id/history',
      param: 'delivery_id',
      idMax: 128,
      what: 'a webhook delivery',
    },
  ],
  reactors: (r, cfg) => [
    new WebhookDispatcher(
      r(PLATFORM.Executor),
      r(PLATFORM.EventStore),
      new WebhookEventRegistry(r(PLATFORM.WebhookMappings)),
      r(WEBHOOKS.Queries),
      r(WEBHOOKS.ConversationContext),
      r(PLATFORM.Logger),
      { handover: cfg.WEBHOOK_CONCURRENCY > 0 ? r(WEBHOOKS.Worker) : null },
    ),
    new WebhookHealthReactor(r(PLATFORM.Executor)),
    new WebhookTestSend(r(PLATFORM.Executor), r(PLATFORM.BaseClock), r(WEBHOOKS.Queries), r(WEBHOOKS.UrlPolicy), r(WEBHOOKS.Sender), {
      defaultDeadlineMs: cfg.WEBHOOK_DELIVERY_TIMEOUT_SECONDS * 1000,
    }),
    // the warning before a webhook is disabled goes to the account's address through the sign-up mailer
    new WebhookWarningMailer(r(PLATFORM.Executor), new KyselyAccountAddresses(r(PLATFORM.ReadDb)), r(SIGNUP.Mailer)),
  ],
  workers: (r, cfg) => (cfg.WEBHOOK_CONCURRENCY > 0 ? [deliveryWorker(r)] : []),
  migrations: { '010-webhooks': m010, '031-webhook-events': m031, '121-webhook-notices': m121 },
  // the sender keeps connections to receivers alive between deliveries; they close with the process
  close: (r) => {
    const sender = r(WEBHOOKS.Sender);
    if (sender instanceof HttpWebhookSender) sender.close();
  },
  errors: {
    WEBHOOK_NOT_FOUND: { ...httpError.notFound, fix: 'Configure one first with POST /v1/webhooks or POST /v1/agents/{agent_id}/webhook.' },
    WEBHOOK_DELIVERY_NOT_FOUND: { ...httpError.notFound, fix: 'List the deliveries with GET /v1/webhooks/deliveries.' },
    WEBHOOK_DELIVERY_PENDING: { ...httpError.conflict, fix: 'Wait until the delivery has succeeded or failed, then send it again.' },
    WEBHOOK_NOT_SENDABLE: { ...httpError.conflict, fix: 'Configure the webhook again (POST /v1/webhooks), then send the delivery again.' },
  } satisfies Record<WebhookErrorCode, unknown>,
} as const satisfies Capability;

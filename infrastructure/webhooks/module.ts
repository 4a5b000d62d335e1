import type { Container } from 'inversify';
import type { Kysely } from 'kysely';
import type { ClockPort } from '../../application/ports/clock.port.js';
import type { EventStorePort } from '../../application/ports/event-store.port.js';
import type { IdsPort } from '../../application/ports/ids.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { AgentQueries } from '../../application/ports/queries.port.js';
import type { ReadModelsPort } from '../../application/ports/read-models.port.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { ConversationContextPort, WebhookQueries, WebhookSenderPort } from '../../application/ports/webhook.port.js';
import { allWebhookMappings } from '../../application/webhooks/mappings/index.js';
import { WebhookEventRegistry } from '../../application/webhooks/registry.js';
import { WebhookCommands } from '../../application/webhooks/webhook-commands.js';
import { WebhookDeliverer } from '../../application/webhooks/webhook-deliverer.js';
import { WebhookDispatcher } from '../../application/webhooks/webhook-dispatcher.js';
import { WebhookHealthReactor } from '../../application/webhooks/webhook-health.js';
import { KyselyWebhookQueries } from '../../projections/queries/webhook.queries.js';
import type { ProjectionEngine } from '../../projections/shared/engine.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { webhookDeliveriesProjector } from '../../projections/webhook-deliveries.projector.js';
import type { Config } from '../config/config.js';
import type { BackgroundWorker, WorkerModule } from '../workers.js';
import { WebhookUrlPolicy, type Destinations } from './address-policy.js';
import { WebhookDeliveryWorker, type DeliveryWorkerOptions } from './delivery-worker.js';
import { KyselyDueAttempts } from './due-attempts.js';
import { HttpWebhookSender } from './http-sender.js';
import { NoConversationContext } from './no-conversation-context.js';
import { ReactorRunner } from '../reactors/reactor-runner.js';
import { RandomWebhookSecrets } from './secrets.js';
import { secretKeys } from '../adapters/secret-keys.js';

export const DISPATCH_REACTOR = 'webhook_dispatch';
export const HEALTH_REACTOR = 'webhook_health';

const destinations = (cfg: Config): Destinations => (cfg.WEBHOOK_ALLOW_PRIVATE ? 'any' : cfg.PROVIDER_MODE === 'sandbox' ? 'public-or-loopback' : 'public');

/** Webhook bindings of the composition root (one call from infrastructure/container.ts). */
export function bindWebhooks(c: Container, cfg: Config, readDb: Kysely<ReadDb>): void {
  const secrets = new RandomWebhookSecrets(secretKeys(cfg.SECRETS_KEY).webhookSecrets);
  c.bind<WebhookQueries>(TOKENS.WebhookQueries).toConstantValue(new KyselyWebhookQueries(readDb, (s) => secrets.open(s)));
  c.bind<WebhookSenderPort>(TOKENS.WebhookSender).toConstantValue(new HttpWebhookSender({ destinations: destinations(cfg) }));
  c.bind(TOKENS.WebhookSecrets).toConstantValue(secrets);
  c.bind(TOKENS.WebhookUrlPolicy).toConstantValue(new WebhookUrlPolicy(destinations(cfg)));
  c.bind(TOKENS.WebhookEvents).toConstantValue(new WebhookEventRegistry(allWebhookMappings));
  // the messaging capability binds its own context before this call
  if (!c.isBound(TOKENS.ConversationContext)) c.bind<ConversationContextPort>(TOKENS.ConversationContext).toConstantValue(new NoConversationContext());
  c.bind(TOKENS.WebhookCommands).toResolvedValue(
    (store: EventStorePort, ids: IdsPort, clock: ClockPort, readModels: ReadModelsPort, webhooks: WebhookQueries, agents: AgentQueries,
      secrets: RandomWebhookSecrets, policy: WebhookUrlPolicy, sender: WebhookSenderPort) =>
      new WebhookCommands(store, ids, clock, readModels, webhooks, agents, secrets, policy, sender, { defaultDeadlineMs: cfg.WEBHOOK_DELIVERY_TIMEOUT_SECONDS * 1000 }),
    [TOKENS.EventStore, TOKENS.Ids, TOKENS.Clock, TOKENS.ReadModels, TOKENS.WebhookQueries, TOKENS.AgentQueries, TOKENS.WebhookSecrets,
      TOKENS.WebhookUrlPolicy, TOKENS.WebhookSender]);
}

/** A delivery worker over the container's stores; `sender` replaces the HTTP sender (tests inject faults). */
export function createDeliveryWorker(c: Container, o: Partial<DeliveryWorkerOptions> & { sender?: WebhookSenderPort } = {}): WebhookDeliveryWorker {
  const cfg = c.get<Config>(TOKENS.Config);
  const log = c.get<LoggerPort>(TOKENS.Logger);
  const clock = c.get<ClockPort>(TOKENS.Clock);
  const deliverer = new WebhookDeliverer(
    c.get(TOKENS.EventStore), c.get(TOKENS.Ids), clock, c.get(TOKENS.WebhookQueries), o.sender ?? c.get(TOKENS.WebhookSender), log,
    { defaultDeadlineMs: cfg.WEBHOOK_DELIVERY_TIMEOUT_SECONDS * 1000 },
  );
  return new WebhookDeliveryWorker(new KyselyDueAttempts(c.get(TOKENS.ReadDb)), deliverer, clock, log, {
    concurrency: o.concurrency ?? Math.max(1, cfg.WEBHOOK_CONCURRENCY),
    leaseMs: o.leaseMs ?? cfg.WEBHOOK_LEASE_SECONDS * 1000,
    pollIntervalMs: o.pollIntervalMs ?? cfg.WEBHOOK_POLL_INTERVAL_MS,
    ...(o.stopGraceMs !== undefined ? { stopGraceMs: o.stopGraceMs } : {}),
    ...(o.workerId !== undefined ? { workerId: o.workerId } : {}),
  });
}

/**
 * The webhook background work of a worker process: the dispatch reactor (domain events -> scheduled
 * deliveries), the health reactor (finished deliveries -> webhook status) and, unless WEBHOOK_CONCURRENCY=0,
 * the delivery worker, woken whenever the timeline projector advances in this process.
 */
export const webhookWorkerModule: WorkerModule = (c) => {
  const cfg = c.get<Config>(TOKENS.Config);
  const log = c.get<LoggerPort>(TOKENS.Logger);
  const store = c.get<EventStorePort>(TOKENS.EventStore);
  const ids = c.get<IdsPort>(TOKENS.Ids);
  const clock = c.get<ClockPort>(TOKENS.Clock);
  const db = c.get<Kysely<ReadDb>>(TOKENS.ReadDb);
  const dispatcher = new WebhookDispatcher(store, ids, clock, c.get(TOKENS.WebhookEvents), c.get(TOKENS.WebhookQueries), c.get(TOKENS.ConversationContext), log);
  const health = new WebhookHealthReactor(store, ids, clock);
  const parts: BackgroundWorker[] = [
    new ReactorRunner(store, db as unknown as Kysely<unknown>, { name: DISPATCH_REACTOR, handles: dispatcher.eventTypes, handleBatch: (b) => dispatcher.handle(b) }, log, { leaseTtlMs: cfg.REACTOR_LEASE_TTL_MS }),
    new ReactorRunner(store, db as unknown as Kysely<unknown>, { name: HEALTH_REACTOR, handles: health.eventTypes, handleBatch: (b) => health.handle(b) }, log, { leaseTtlMs: cfg.REACTOR_LEASE_TTL_MS }),
  ];
  const worker = cfg.WEBHOOK_CONCURRENCY > 0 ? createDeliveryWorker(c) : null;
  if (worker) parts.push(worker);
  let unsubscribe = () => undefined as void;
  return {
    name: 'webhooks',
    async start() {
      for (const p of parts) await p.start();
      if (worker) {
        const engine = c.get<ProjectionEngine>(TOKENS.ProjectionEngine);
        unsubscribe = engine.onAdvanced((name) => { if (name === webhookDeliveriesProjector.name) worker.wake(); });
      }
    },
    async stop() {
      unsubscribe();
      for (const p of [...parts].reverse()) await p.stop();
    },
  };
};

import type { Kysely } from 'kysely';
import type { ApiKeySecretsPort } from '../../application/accounts/api-key-secrets.port.js';
import type { MessageTransport } from '../../application/messaging/delivery/transport.port.js';
import type { MessageChannel } from '../../application/messaging/message-channel.port.js';
import type { ClockPort } from '../../application/ports/clock.port.js';
import type { EventStorePort } from '../../application/ports/event-store.port.js';
import type { IdsPort } from '../../application/ports/ids.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { ReadModelsPort } from '../../application/ports/read-models.port.js';
import type { CommandExecutor } from '../../application/shared/execute.js';
import type { WebhookMapping } from '../../application/webhooks/registry.js';
import type { ProjectionEngine, ReadModelWaiter } from '../../projections/shared/engine.js';
import type { KeptReadsOf } from '../../projections/shared/kept-reads.js';
import type { LeaseRenewals } from '../../projections/shared/lease-renewals.js';
import type { Projector } from '../../projections/shared/projector.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import type { CarrierAdapter, HistoryRoute } from '../capabilities/capability.js';
import { token } from '../capabilities/token.js';
import type { Config } from '../config/config.js';
import type { DatabaseHandle } from '../db/database.js';
import type { AppendSignals } from '../event-store/append-signals.js';

/**
 * Tokens of what every capability shares. The Symbol.for names are the keys infrastructure classes name in
 * `@inject(…)`; each capability's own tokens live in its module.
 */
export const PLATFORM = {
  Config: token<Config>('Config'),
  Logger: token<LoggerPort>('Logger'),
  Database: token<DatabaseHandle>('Database'),
  ReadDb: token<Kysely<ReadDb>>('ReadDb'),
  /** the read side for reads awaited together (docs/event-store.md#reads-together) */
  ReadTogether: token<Kysely<ReadDb>>('ReadTogether'),
  /** the time of every recorded fact and every due time: the base clock, moved forward by the sandbox clock in sandbox mode */
  Clock: token<ClockPort>('ClockPort'),
  /** the system's clock (a test's movable one); signatures use it, receivers check them against their own clocks */
  BaseClock: token<ClockPort>('BaseClock'),
  Ids: token<IdsPort>('IdsPort'),
  EventStore: token<EventStorePort>('EventStorePort'),
  /** append notices that wake the PostgreSQL store's subscriptions (docs/event-store.md#wake-ups) */
  AppendSignals: token<AppendSignals>('AppendSignals'),
  /** the leases this process's runners hold, renewed in one statement (docs/event-store.md#reactors-and-leases) */
  LeaseRenewals: token<LeaseRenewals>('LeaseRenewals'),
  ProjectionEngine: token<ProjectionEngine>('ProjectionEngine'),
  ReadModels: token<ReadModelsPort>('ReadModelsPort'),
  /** the read models' waiter behind `ReadModels`, which also says how far a read model reflects the log */
  ReadModelWaiter: token<ReadModelWaiter>('ReadModelWaiter'),
  /** a projector's read model's answers kept until its next batch; null where not every batch is heard (docs/event-store.md#kept-reads) */
  KeptReads: token<KeptReadsOf>('KeptReads'),
  Executor: token<CommandExecutor>('CommandExecutor'),
  /** API keys are hashed at the edge (authentication) and issued by the accounts capability */
  ApiKeySecrets: token<ApiKeySecretsPort>('ApiKeySecretsPort'),
  /** every capability's projectors and webhook mappings, gathered by the composition root */
  Projectors: token<readonly Projector[]>('Projectors'),
  WebhookMappings: token<readonly WebhookMapping[]>('WebhookMappings'),
  /** every capability's channels of the send path, in the capability list's order */
  MessageChannels: token<readonly MessageChannel[]>('MessageChannelList'),
  /** every capability's transports of the delivery pipeline, in the capability list's order */
  MessageTransports: token<readonly MessageTransport[]>('MessageTransportList'),
  /** every capability's resources with an audit history */
  Histories: token<readonly HistoryRoute[]>('HistoryRouteList'),
  /** the carrier CARRIER chooses among the capabilities' (null: none runs) */
  Carrier: token<CarrierAdapter | null>('ChosenCarrier'),
} as const;

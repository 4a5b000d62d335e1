import 'reflect-metadata';
import { Container } from 'inversify';
import type { Kysely } from 'kysely';
import { AccountCommands } from '../application/accounts/account-commands.js';
import { AgentCommands } from '../application/agents/agent-commands.js';
import type { ApiKeySecretsPort } from '../application/ports/api-key-secrets.port.js';
import type { ClockPort } from '../application/ports/clock.port.js';
import type { EventStorePort } from '../application/ports/event-store.port.js';
import type { IdsPort } from '../application/ports/ids.port.js';
import type { AccountQueries, AgentQueries } from '../application/ports/queries.port.js';
import type { ReadModelsPort } from '../application/ports/read-models.port.js';
import { TOKENS } from '../application/ports/tokens.js';
import type { VoiceCataloguePort } from '../application/ports/voice-catalogue.port.js';
import { allProjectors } from '../projections/index.js';
import { KyselyAccountQueries } from '../projections/queries/account.queries.js';
import { KyselyAgentQueries } from '../projections/queries/agent.queries.js';
import { KyselyUsageQueries } from '../projections/queries/usage.queries.js';
import { UsageReport } from '../application/accounts/usage.js';
import type { UsageQueries } from '../application/ports/usage.port.js';
import { ProjectionEngine, ReadModelWaiter } from '../projections/shared/engine.js';
import type { ReadDb } from '../projections/shared/read-db.js';
import { Sha256ApiKeySecrets } from './adapters/api-key-secrets.js';
import { RandomIds } from './adapters/random-ids.js';
import { SystemClock } from './adapters/system-clock.js';
import type { Config } from './config/config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { EsdbEventStore } from './event-store/esdb-event-store.js';
import { PgEventStore } from './event-store/pg-event-store.js';
import type { Logger } from './logger.js';
import { SandboxVoiceCatalogue } from './providers/sandbox-voice-catalogue.js';
import { bindNumbers } from './numbers.module.js';
import { bindSignUp } from './signup.module.js';
import { bindWebhooks } from './webhooks/module.js';

export type Overrides = Partial<{ clock: ClockPort }>;

/**
 * The composition root: the only place that chooses adapters. Infrastructure classes are bound with
 * `.to(Class)` and declare `@inject(TOKEN)` on each constructor parameter; application classes stay free of
 * framework imports and are bound with `toResolvedValue(factory, [TOKENS…])`. Neither needs decorator metadata.
 */
export async function buildContainer(cfg: Config, log: Logger, overrides: Overrides = {}): Promise<{ container: Container; database: DatabaseHandle }> {
  const database = await openDatabase({ databaseUrl: cfg.DATABASE_URL, dataDir: cfg.DATA_DIR, poolSize: cfg.DATABASE_POOL_SIZE });
  await migrateToLatest(database.db as unknown as Kysely<unknown>);
  const readDb = database.db as unknown as Kysely<ReadDb>;

  const c = new Container({ defaultScope: 'Singleton' });
  c.bind(TOKENS.Config).toConstantValue(cfg);
  c.bind(TOKENS.Logger).toConstantValue(log);
  c.bind(TOKENS.ReadDb).toConstantValue(readDb);
  if (overrides.clock) c.bind<ClockPort>(TOKENS.Clock).toConstantValue(overrides.clock);
  else c.bind<ClockPort>(TOKENS.Clock).to(SystemClock);
  c.bind<IdsPort>(TOKENS.Ids).to(RandomIds);
  c.bind<ApiKeySecretsPort>(TOKENS.ApiKeySecrets).to(Sha256ApiKeySecrets);
  c.bind<VoiceCataloguePort>(TOKENS.VoiceCatalogue).to(SandboxVoiceCatalogue);

  if (cfg.EVENTSTORE_URL) {
    c.bind<EventStorePort>(TOKENS.EventStore).toConstantValue(new EsdbEventStore(cfg.EVENTSTORE_URL));
  } else {
    c.bind<EventStorePort>(TOKENS.EventStore).toResolvedValue(
      (clock: ClockPort) => new PgEventStore(database.db, clock, { pollIntervalMs: cfg.EVENT_POLL_INTERVAL_MS }), [TOKENS.Clock]);
  }

  c.bind<AccountQueries>(TOKENS.AccountQueries).toConstantValue(new KyselyAccountQueries(readDb));
  c.bind<AgentQueries>(TOKENS.AgentQueries).toConstantValue(new KyselyAgentQueries(readDb));
  c.bind<UsageQueries>(TOKENS.UsageQueries).toConstantValue(new KyselyUsageQueries(readDb));
  c.bind(TOKENS.UsageReport).toResolvedValue(
    (clock: ClockPort, accounts: AccountQueries, usage: UsageQueries) => new UsageReport(clock, accounts, usage),
    [TOKENS.Clock, TOKENS.AccountQueries, TOKENS.UsageQueries]);

  const runsProjectors = cfg.ROLE !== 'api';
  c.bind<ProjectionEngine>(TOKENS.ProjectionEngine).toResolvedValue(
    (store: EventStorePort) => new ProjectionEngine(store, readDb, allProjectors, log, { leaseTtlMs: cfg.REACTOR_LEASE_TTL_MS }), [TOKENS.EventStore]);
  c.bind<ReadModelsPort>(TOKENS.ReadModels).toResolvedValue(
    (engine: ProjectionEngine) => new ReadModelWaiter(readDb, allProjectors, runsProjectors ? engine : null, { timeoutMs: cfg.READ_MODEL_TIMEOUT_MS }),
    [TOKENS.ProjectionEngine]);

  c.bind(TOKENS.AccountCommands).toResolvedValue(
    (...a: ConstructorParameters<typeof AccountCommands>) => new AccountCommands(...a),
    [TOKENS.EventStore, TOKENS.Ids, TOKENS.Clock, TOKENS.ApiKeySecrets, TOKENS.ReadModels, TOKENS.AccountQueries]);
  c.bind(TOKENS.AgentCommands).toResolvedValue(
    (...a: ConstructorParameters<typeof AgentCommands>) => new AgentCommands(...a),
    [TOKENS.EventStore, TOKENS.Ids, TOKENS.Clock, TOKENS.ReadModels, TOKENS.AgentQueries, TOKENS.VoiceCatalogue]);

  bindNumbers(c, cfg, readDb);
  bindSignUp(c, cfg, readDb);

  bindWebhooks(c, cfg, readDb);

  return { container: c, database };
}

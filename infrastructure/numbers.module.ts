import type { Container } from 'inversify';
import type { Kysely } from 'kysely';
import type { AccountCommands } from '../application/accounts/account-commands.js';
import { NumberCommands } from '../application/numbers/number-commands.js';
import { NumberLookup } from '../application/numbers/number-lookup.js';
import { NumberProcess } from '../application/numbers/number-process.js';
import { NumberRenewals } from '../application/numbers/number-renewals.js';
import type { CarrierPort } from '../application/ports/carrier.port.js';
import type { ClockPort } from '../application/ports/clock.port.js';
import type { EventStorePort } from '../application/ports/event-store.port.js';
import type { IdsPort } from '../application/ports/ids.port.js';
import type { LoggerPort } from '../application/ports/logger.port.js';
import type { LookupCachePort } from '../application/ports/lookup-cache.port.js';
import type { NumberQueries, SipTrunkQueries } from '../application/ports/number-queries.port.js';
import type { ReadModelsPort } from '../application/ports/read-models.port.js';
import type { SipTrunkProviderPort } from '../application/ports/sip-trunk-provider.port.js';
import { TOKENS } from '../application/ports/tokens.js';
import { SipTrunkCommands } from '../application/sip-trunks/sip-trunk-commands.js';
import { KyselyNumberActivityQueries, KyselyNumberQueries, KyselySipTrunkQueries } from '../projections/queries/number.queries.js';
import type { ReadDb } from '../projections/shared/read-db.js';
import { KyselyLookupCache } from './adapters/kysely-lookup-cache.js';
import type { Config } from './config/config.js';
import { SandboxCarrier } from './providers/sandbox/sandbox-carrier.js';
import { SandboxFaults } from './providers/sandbox/sandbox-faults.js';
import { SandboxSipTrunks } from './providers/sandbox/sandbox-sip-trunks.js';
import { UnconfiguredCarrier, UnconfiguredSipTrunks } from './providers/unconfigured-telecom.js';
import { ReactorRunner } from './reactors/reactor-runner.js';
import type { WorkerModule } from './workers.js';
import { NumberRenewalWorker } from './workers/number-renewal.worker.js';

/** Background workers of the phone-number capability (not application ports, so their tokens live here). */
export const NUMBER_WORKERS = {
  Process: Symbol.for('NumberProcessRunner'),
  Renewal: Symbol.for('NumberRenewalWorker'),
} as const;

/**
 * Phone numbers, lookup and SIP trunks: adapters (the sandbox carrier and SIP provider in sandbox mode;
 * failing placeholders in live mode until real adapters exist), queries, use cases and workers.
 */
export function bindNumbers(c: Container, cfg: Config, readDb: Kysely<ReadDb>): void {
  if (cfg.PROVIDER_MODE === 'sandbox') {
    c.bind(SandboxFaults).toSelf();
    c.bind(SandboxCarrier).toSelf();
    c.bind(SandboxSipTrunks).toSelf();
    c.bind<CarrierPort>(TOKENS.Carrier).toService(SandboxCarrier);
    c.bind<SipTrunkProviderPort>(TOKENS.SipTrunkProvider).toService(SandboxSipTrunks);
  } else {
    c.bind<CarrierPort>(TOKENS.Carrier).to(UnconfiguredCarrier);
    c.bind<SipTrunkProviderPort>(TOKENS.SipTrunkProvider).to(UnconfiguredSipTrunks);
  }
  c.bind<LookupCachePort>(TOKENS.LookupCache).to(KyselyLookupCache);
  c.bind<NumberQueries>(TOKENS.NumberQueries).toConstantValue(new KyselyNumberQueries(readDb));
  c.bind<SipTrunkQueries>(TOKENS.SipTrunkQueries).toConstantValue(new KyselySipTrunkQueries(readDb));
  c.bind(TOKENS.NumberActivityQueries).toConstantValue(new KyselyNumberActivityQueries(readDb));

  c.bind(TOKENS.NumberCommands).toResolvedValue(
    (store: EventStorePort, ids: IdsPort, clock: ClockPort, readModels: ReadModelsPort, queries: NumberQueries, accounts: AccountCommands) =>
      new NumberCommands(store, ids, clock, readModels, queries, accounts, { provisioningTimeoutMs: cfg.NUMBER_PROVISIONING_TIMEOUT_MS }),
    [TOKENS.EventStore, TOKENS.Ids, TOKENS.Clock, TOKENS.ReadModels, TOKENS.NumberQueries, TOKENS.AccountCommands]);
  // the sign-up flow provisions its first number through the same path
  c.bind(TOKENS.NumberProvisioning).toService(TOKENS.NumberCommands);
  c.bind(TOKENS.NumberProcess).toResolvedValue(
    (...a: ConstructorParameters<typeof NumberProcess>) => new NumberProcess(...a),
    [TOKENS.EventStore, TOKENS.Ids, TOKENS.Clock, TOKENS.Carrier, TOKENS.AccountCommands, TOKENS.ReadModels, TOKENS.NumberQueries, TOKENS.Logger]);
  c.bind(TOKENS.NumberLookup).toResolvedValue(
    (store: EventStorePort, ids: IdsPort, clock: ClockPort, carrier: CarrierPort, cache: LookupCachePort, accounts: AccountCommands) =>
      new NumberLookup(store, ids, clock, carrier, cache, accounts, { cacheTtlSeconds: cfg.NUMBER_LOOKUP_CACHE_TTL_SECONDS }),
    [TOKENS.EventStore, TOKENS.Ids, TOKENS.Clock, TOKENS.Carrier, TOKENS.LookupCache, TOKENS.AccountCommands]);
  c.bind(TOKENS.NumberRenewals).toResolvedValue(
    (...a: ConstructorParameters<typeof NumberRenewals>) => new NumberRenewals(...a),
    [TOKENS.EventStore, TOKENS.Ids, TOKENS.Clock, TOKENS.AccountCommands, TOKENS.NumberQueries, TOKENS.ReadModels, TOKENS.Logger]);
  c.bind(TOKENS.SipTrunkCommands).toResolvedValue(
    (...a: ConstructorParameters<typeof SipTrunkCommands>) => new SipTrunkCommands(...a),
    [TOKENS.EventStore, TOKENS.Ids, TOKENS.Clock, TOKENS.ReadModels, TOKENS.SipTrunkProvider, TOKENS.SipTrunkQueries]);

  c.bind(NUMBER_WORKERS.Process).toResolvedValue(
    (store: EventStorePort, process: NumberProcess, log: LoggerPort) =>
      new ReactorRunner(store, readDb as unknown as Kysely<unknown>, { name: 'number_process', handles: process.handles, handleBatch: (b) => process.handleBatch(b) }, log, { leaseTtlMs: cfg.REACTOR_LEASE_TTL_MS }),
    [TOKENS.EventStore, TOKENS.NumberProcess, TOKENS.Logger]);
  c.bind(NUMBER_WORKERS.Renewal).toResolvedValue(
    (renewals: NumberRenewals, log: LoggerPort) => new NumberRenewalWorker(renewals, log, { intervalMs: cfg.NUMBER_RENEWAL_INTERVAL_MS }),
    [TOKENS.NumberRenewals, TOKENS.Logger]);
}

/** The process manager (provisioning, release, clean-ups) and the monthly renewal job. */
export const numberWorkerModules: readonly WorkerModule[] = [
  (c) => c.get<ReactorRunner>(NUMBER_WORKERS.Process),
  (c) => c.get<NumberRenewalWorker>(NUMBER_WORKERS.Renewal),
];

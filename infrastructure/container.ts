import 'reflect-metadata';
import { Container } from 'inversify';
import type { MessageTransport } from '../application/messaging/delivery/transport.port.js';
import type { MessageChannel } from '../application/messaging/message-channel.port.js';
import type { ClockPort } from '../application/ports/clock.port.js';
import { binder, type Capability, type CarrierAdapter, type HistoryRoute, type Resolve, resolver } from './capabilities/capability.js';
import { capabilities, projectorsOf, webhookMappingsOf } from './capabilities/index.js';
import type { Config } from './config/config.js';
import { carrierNameOf } from './config/providers.js';
import { type DatabaseHandle, openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import type { Logger } from './logger.js';
import { PLATFORM } from './platform/tokens.js';

/**
 * What a test (or bench) may supply instead of the configured parts: a movable clock, an already-migrated in-memory
 * database image or an open database (the runtime closes it: a test's pooled PGlite, docs/testing.md#running-the-tests),
 * and the capability list (the service's own plus one under test: docs/adding-a-capability.md).
 */
export type Overrides = Partial<{
  clock: ClockPort;
  databaseImage: Blob | File;
  database: DatabaseHandle;
  capabilities: readonly Capability[];
}>;

/**
 * The composition root: opens the database, migrates it, and lets every capability bind what it owns. Only the
 * configuration, the logger, the database and what the capabilities contribute to each other (projectors,
 * webhook mappings, message channels and transports) are bound here.
 */
export async function buildContainer(
  cfg: Config,
  log: Logger,
  overrides: Overrides = {},
): Promise<{ container: Container; get: Resolve; database: DatabaseHandle; capabilities: readonly Capability[] }> {
  const list: readonly Capability[] = overrides.capabilities ?? capabilities;
  const database =
    overrides.database ??
    (await openDatabase({
      databaseUrl: cfg.DATABASE_URL,
      dataDir: cfg.DATA_DIR,
      poolSize: cfg.DATABASE_POOL_SIZE,
      prepared: cfg.DATABASE_PREPARED_STATEMENTS,
      thread: cfg.PGLITE_THREAD,
      onConnectionError: (err) => log.warn({ err: err.message }, 'database connection lost; reconnecting on next use'),
      ...(overrides.databaseImage ? { image: overrides.databaseImage } : {}),
    }));
  await migrateToLatest(database.db, list);

  const c = new Container({ defaultScope: 'Singleton' });
  const b = binder(c);
  b.value(PLATFORM.Config, cfg);
  b.value(PLATFORM.Logger, log);
  b.value(PLATFORM.Database, database);
  b.value(PLATFORM.ReadDb, database.readDb);
  b.value(PLATFORM.ReadTogether, database.readTogether);
  b.value(PLATFORM.Projectors, projectorsOf(list));
  b.value(PLATFORM.WebhookMappings, webhookMappingsOf(list));
  b.factory(PLATFORM.MessageChannels, (r): readonly MessageChannel[] => list.flatMap((m) => m.messageChannels?.(r) ?? []));
  b.factory(PLATFORM.MessageTransports, (r): readonly MessageTransport[] => list.flatMap((m) => m.messageTransports?.(r) ?? []));
  b.factory(PLATFORM.Histories, (r): readonly HistoryRoute[] => list.flatMap((m) => m.histories?.(r) ?? []));
  b.value(PLATFORM.Carrier, chosenCarrier(list, cfg));
  if (overrides.clock) b.value(PLATFORM.BaseClock, overrides.clock);
  for (const m of list) m.bind?.(b, cfg);
  return { container: c, get: resolver(c), database, capabilities: list };
}

/** The carrier `CARRIER` names among those the capabilities contribute; null when none runs (live mode without one). */
function chosenCarrier(list: readonly Capability[], cfg: Config): CarrierAdapter | null {
  const name = carrierNameOf(cfg);
  if (name === null) return null;
  const all = list.flatMap((m) => m.carriers?.(cfg) ?? []);
  const found = all.find((c) => c.name === name);
  if (!found)
    throw new Error(`invalid configuration:\n  CARRIER=${name} names no carrier; known: ${all.map((c) => c.name).join(', ') || 'none'}`);
  return found;
}

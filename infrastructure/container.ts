import 'reflect-metadata';
import { Container } from 'inversify';
import type { Kysely } from 'kysely';
import type { MessageTransport } from '../application/messaging/delivery/transport.port.js';
import type { MessageChannel } from '../application/messaging/message-channel.port.js';
import type { ClockPort } from '../application/ports/clock.port.js';
import type { ReadDb } from '../projections/shared/read-db.js';
import { binder, type Resolve, resolver } from './capabilities/capability.js';
import { allProjectors, allWebhookMappings, capabilities } from './capabilities/index.js';
import type { Config } from './config/config.js';
import { type DatabaseHandle, openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import type { Logger } from './logger.js';
import { PLATFORM } from './platform/tokens.js';

/** What a test (or bench) may supply instead of the configured parts: a movable clock, an already-migrated in-memory database image. */
export type Overrides = Partial<{ clock: ClockPort; databaseImage: Blob | File }>;

/**
 * The composition root: opens the database, migrates it, and lets every capability bind what it owns. Only the
 * configuration, the logger, the database and what the capabilities contribute to each other (projectors,
 * webhook mappings, message channels and transports) are bound here.
 */
export async function buildContainer(
  cfg: Config,
  log: Logger,
  overrides: Overrides = {},
): Promise<{ container: Container; get: Resolve; database: DatabaseHandle }> {
  const database = await openDatabase({
    databaseUrl: cfg.DATABASE_URL,
    dataDir: cfg.DATA_DIR,
    poolSize: cfg.DATABASE_POOL_SIZE,
    onConnectionError: (err) => log.warn({ err: err.message }, 'database connection lost; reconnecting on next use'),
    ...(overrides.databaseImage ? { image: overrides.databaseImage } : {}),
  });
  await migrateToLatest(database.db, capabilities);

  const c = new Container({ defaultScope: 'Singleton' });
  const b = binder(c);
  b.value(PLATFORM.Config, cfg);
  b.value(PLATFORM.Logger, log);
  b.value(PLATFORM.Database, database);
  // the same connection, seen through the read-side tables only (Kysely's table map is invariant, hence the cast)
  b.value(PLATFORM.ReadDb, database.db as unknown as Kysely<ReadDb>);
  b.value(PLATFORM.Projectors, allProjectors);
  b.value(PLATFORM.WebhookMappings, allWebhookMappings);
  b.factory(PLATFORM.MessageChannels, (r) =>
    capabilities.flatMap((m): readonly MessageChannel[] => ('messageChannels' in m ? m.messageChannels(r) : [])),
  );
  b.factory(PLATFORM.MessageTransports, (r) =>
    capabilities.flatMap((m): readonly MessageTransport[] => ('messageTransports' in m ? m.messageTransports(r) : [])),
  );
  if (overrides.clock) b.value(PLATFORM.BaseClock, overrides.clock);
  for (const m of capabilities) if ('bind' in m) m.bind(b, cfg);
  return { container: c, get: resolver(c), database };
}

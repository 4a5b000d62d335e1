import type { Server } from 'node:http';
import type { Express } from 'express';
import type { Container } from 'inversify';
import type { AccountCommands } from '../application/accounts/account-commands.js';
import type { ClockPort } from '../application/ports/clock.port.js';
import { START, type EventStorePort } from '../application/ports/event-store.port.js';
import { TOKENS } from '../application/ports/tokens.js';
import type { ProjectionEngine } from '../projections/shared/engine.js';
import type { Config } from './config/config.js';
import { buildContainer, type Overrides } from './container.js';
import { ping, type DatabaseHandle } from './db/database.js';
import { buildApp } from './http/app.js';
import type { Logger } from './logger.js';
import { workerModules } from './workers.js';

export type Runtime = Readonly<{
  cfg: Config;
  container: Container;
  database: DatabaseHandle;
  store: EventStorePort;
  engine: ProjectionEngine;
  app: Express;
  get<T>(token: symbol): T;
  close(): Promise<void>;
}>;

/** Wires everything, runs migrations and (unless ROLE=api) starts the projectors, caught up, before returning. */
export async function createRuntime(cfg: Config, log: Logger, overrides: Overrides = {}): Promise<Runtime> {
  const { container, database } = await buildContainer(cfg, log, overrides);
  const get = <T>(t: symbol) => container.get<T>(t);
  const store = get<EventStorePort>(TOKENS.EventStore);
  const engine = get<ProjectionEngine>(TOKENS.ProjectionEngine);
  const workers = cfg.ROLE !== 'api' ? workerModules.map((m) => m(container)) : [];
  if (cfg.ROLE !== 'api') {
    await engine.start();
    for (const w of workers) await w.start();
  }
  const clock = get<ClockPort>(TOKENS.Clock);
  const app = buildApp({
    log,
    publicUrl: cfg.PUBLIC_URL,
    adminToken: cfg.ADMIN_TOKEN,
    throttle: { maxRequests: cfg.THROTTLE_MAX_REQUESTS, windowSeconds: cfg.THROTTLE_WINDOW_SECONDS },
    now: () => clock.now().getTime(),
    ready: async () => {
      const checks: Record<string, string> = {};
      await ping(database.db).then(() => { checks.database = 'ok'; }, (e: unknown) => { checks.database = String(e); });
      await store.headCheckpoint().then(() => { checks.eventStore = 'ok'; }, (e: unknown) => { checks.eventStore = String(e); });
      return { ok: Object.values(checks).every((v) => v === 'ok'), checks };
    },
    container,
    secrets: get(TOKENS.ApiKeySecrets),
    accountQueries: get(TOKENS.AccountQueries),
  });
  let closed = false;
  return {
    cfg, container, database, store, engine, app, get,
    async close() {
      if (closed) return;
      closed = true;
      for (const w of [...workers].reverse()) await w.stop();
      await engine.stop();
      await store.close();
      await database.close();
    },
  };
}

/** On an empty embedded store, create a development account and return its key (printed once by main). */
export async function ensureDevAccount(rt: Runtime): Promise<{ accountId: string; apiKey: string } | null> {
  const wanted = rt.cfg.DEV_ACCOUNT ?? (!rt.cfg.DATABASE_URL && !rt.cfg.EVENTSTORE_URL);
  if (!wanted || (await rt.store.headCheckpoint()) !== START) return null;
  const accounts = rt.get<AccountCommands>(TOKENS.AccountCommands);
  const ctx = { accountId: 'system', requestId: null, correlationId: 'dev-account', actor: 'system:bootstrap' };
  const r = await accounts.open(ctx, { name: 'Development', keyName: 'development' });
  return { accountId: r.accountId, apiKey: r.apiKey };
}

export function listen(app: Express, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(server)));
  });
}

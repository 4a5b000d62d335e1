import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import type { Container } from 'inversify';
import { type EventStorePort, START } from '../application/ports/event-store.port.js';
import type { ProjectionEngine } from '../projections/shared/engine.js';
import { ACCOUNTS } from './accounts/tokens.js';
import type { Capability, Resolve, UpgradeRoute } from './capabilities/capability.js';
import { type Config, holdsLines } from './config/config.js';
import { buildContainer, type Overrides } from './container.js';
import { type DatabaseHandle, ping } from './db/database.js';
import { buildApp } from './http/app.js';
import type { Logger } from './logger.js';
import { PLATFORM } from './platform/tokens.js';
import { ProcessMembership } from './reactors/membership.js';
import { ReactorRunner } from './reactors/reactor-runner.js';
import type { BackgroundWorker } from './workers.js';

export type Runtime = Readonly<{
  cfg: Config;
  container: Container;
  database: DatabaseHandle;
  store: EventStorePort;
  engine: ProjectionEngine;
  app: Express;
  get: Resolve;
  /** this process's background work by name (`reactor:<name>` for reactors); empty in an api-only process */
  workers: ReadonlyMap<string, BackgroundWorker>;
  /** the capabilities' protocol upgrades (WebSockets), for the HTTP server `listen` makes */
  upgrades: Upgrades;
  close(): Promise<void>;
}>;

/** What the HTTP server does with upgrade requests, and how their connections end before it closes. */
export type Upgrades = Readonly<{
  handle: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  drain: () => Promise<void>;
}>;

/** The capabilities' upgrade routes, by path; a request to any other path is answered 404 and closed. */
function upgradesOf(capabilities: readonly Capability[], get: Resolve, cfg: Config): Upgrades {
  let routes: readonly UpgradeRoute[] | null = null; // built on the first upgrade: a process that serves none builds none
  const all = () => {
    routes ??= capabilities.flatMap((m) => m.upgrades?.(get, cfg) ?? []);
    return routes;
  };
  return {
    handle: (req, socket, head) => {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      const route = all().find((r) => r.path === path);
      if (route) {
        route.handle(req, socket, head);
        return;
      }
      socket.on('error', () => undefined);
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    },
    drain: async () => {
      await Promise.all((routes ?? []).map((r) => r.drain?.()));
    },
  };
}

/** Every capability's reactors (each on a leased reactor runner) and other background workers. */
function backgroundWork(capabilities: readonly Capability[], get: Resolve, cfg: Config): BackgroundWorker[] {
  const store = get(PLATFORM.EventStore);
  const db = get(PLATFORM.ReadDb);
  const log = get(PLATFORM.Logger);
  // embedded there is one process and one connection: partitions would only add subscriptions
  const partitions = get(PLATFORM.Database).kind === 'pglite' ? 1 : cfg.REACTOR_PARTITIONS;
  const membership = partitions > 1 ? new ProcessMembership(db, cfg.REACTOR_LEASE_TTL_MS) : null;
  // a partition given back is told to the other processes, which take it at once (docs/event-store.md#partitioned-reactors)
  const freed = get(PLATFORM.AppendSignals);
  return [
    ...(membership ? [membership] : []), // started first, stopped last
    ...capabilities.flatMap((m) => [
      ...(m.reactors?.(get, cfg) ?? []).map(
        (reactor) =>
          new ReactorRunner(store, db, reactor, log, {
            leaseTtlMs: cfg.REACTOR_LEASE_TTL_MS,
            checkpointEveryMs: cfg.REACTOR_CHECKPOINT_EVERY_MS,
            renewals: get(PLATFORM.LeaseRenewals),
            partitions,
            ...(membership ? { membership, freed } : {}),
          }),
      ),
      ...(m.workers?.(get, cfg) ?? []),
    ]),
  ];
}

/** Wires everything, runs migrations and (ROLE all and worker) starts the projectors, caught up, then the workers. */
export async function createRuntime(cfg: Config, log: Logger, overrides: Overrides = {}): Promise<Runtime> {
  const { container, get, database, capabilities } = await buildContainer(cfg, log, overrides);
  for (const m of capabilities) await m.start?.(get);
  const store = get(PLATFORM.EventStore);
  const engine = get(PLATFORM.ProjectionEngine);
  // docs/operations.md#roles: projectors and background work in `all` and `worker`; the lines' work in `all` and `voice`
  const works = cfg.ROLE === 'all' || cfg.ROLE === 'worker';
  const workers = [
    ...(works ? backgroundWork(capabilities, get, cfg) : []),
    ...(holdsLines(cfg) ? capabilities.flatMap((m) => m.lineWorkers?.(get, cfg) ?? []) : []),
  ];
  if (works) await engine.start();
  for (const w of workers) await w.start();
  const clock = get(PLATFORM.Clock);
  const app = buildApp({
    log,
    accessLogLevel: cfg.ACCESS_LOG_LEVEL ?? (cfg.PROVIDER_MODE === 'sandbox' ? 'debug' : 'info'),
    capabilities,
    resolve: get,
    publicUrl: cfg.PUBLIC_URL,
    adminToken: cfg.ADMIN_TOKEN,
    throttle: { maxRequests: cfg.THROTTLE_MAX_REQUESTS, windowSeconds: cfg.THROTTLE_WINDOW_SECONDS },
    trustProxy: cfg.TRUST_PROXY,
    authFailuresPerClient: cfg.AUTH_FAILURES_PER_CLIENT,
    now: () => clock.now().getTime(),
    ready: async () => {
      const checks: Record<string, string> = {};
      await ping(database.db).then(
        () => {
          checks.database = 'ok';
        },
        (e: unknown) => {
          checks.database = String(e);
        },
      );
      await store.headCheckpoint().then(
        () => {
          checks.eventStore = 'ok';
        },
        (e: unknown) => {
          checks.eventStore = String(e);
        },
      );
      return { ok: Object.values(checks).every((v) => v === 'ok'), checks };
    },
    secrets: get(PLATFORM.ApiKeySecrets),
    accountQueries: get(ACCOUNTS.Queries),
  });
  let closed = false;
  return {
    cfg,
    container,
    database,
    store,
    engine,
    app,
    get,
    workers: new Map(workers.map((w) => [w.name, w])),
    upgrades: upgradesOf(capabilities, get, cfg),
    async close() {
      if (closed) return;
      closed = true;
      // every step runs even when an earlier one fails: a worker left polling would outlive the process's purpose
      const failures: unknown[] = [];
      const step = async (f: () => unknown) => {
        try {
          await f();
        } catch (err) {
          failures.push(err);
        }
      };
      for (const w of [...workers].reverse()) await step(() => w.stop());
      await step(() => engine.stop());
      for (const m of capabilities) if (m.close) await step(() => m.close?.(get));
      await step(() => store.close());
      await step(() => database.close());
      if (failures.length === 1) throw failures[0];
      if (failures.length > 1) throw new AggregateError(failures, 'the runtime did not close cleanly');
    },
  };
}

/** On an empty embedded store, create a development account and return its key (printed once by main). */
export async function ensureDevAccount(rt: Runtime): Promise<{ accountId: string; apiKey: string } | null> {
  const wanted = rt.cfg.DEV_ACCOUNT ?? (!rt.cfg.DATABASE_URL && !rt.cfg.EVENTSTORE_URL);
  if (!wanted || (await rt.store.headCheckpoint()) !== START) return null;
  const ctx = { accountId: 'system', requestId: null, correlationId: 'dev-account', actor: 'system:bootstrap' };
  const r = await rt.get(ACCOUNTS.Commands).open(ctx, { name: 'Development', keyName: 'development' });
  return { accountId: r.accountId, apiKey: r.apiKey };
}

/**
 * Idle keep-alive connections stay open longer than a load balancer's or a client pool's own idle timeout
 * (commonly 60 s), so the server is never the side that closes a connection a client is about to reuse
 * (docs/operations.md#http-connections).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * Serves `app` on `port`; with `upgrades`, requests to switch protocols (WebSockets) go to the capabilities that
 * take them. Before closing such a server, `upgrades.drain()` ends their connections (the server waits for them).
 */
export function listen(app: Express, port: number, host: string, upgrades?: Upgrades): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(server)));
    if (upgrades) server.on('upgrade', upgrades.handle);
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000; // must exceed the keep-alive timeout
  });
}

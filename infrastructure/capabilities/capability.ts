import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Command as CliProgram } from 'commander';
import type { Container, Newable } from 'inversify';
import type { Migration } from 'kysely';
import type { HistoryView } from '../../application/audit/history.js';
import type { MessageTransport } from '../../application/messaging/delivery/transport.port.js';
import type { MessageChannel } from '../../application/messaging/message-channel.port.js';
import type { SmsCarrierPort } from '../../application/messaging/sms-carrier.port.js';
import type { CarrierPort } from '../../application/numbers/carrier.port.js';
import type { Reactor } from '../../application/shared/process-manager.js';
import type { WebhookMapping } from '../../application/webhooks/registry.js';
import type { ErrorCode } from '../../domain/shared/errors.js';
import type { Projector } from '../../projections/shared/projector.js';
import type { Config } from '../config/config.js';
import type { Api } from '../http/api.js';
import type { HttpError } from '../http/errors.js';
import type { BackgroundWorker } from '../workers.js';
import type { Resolve, Token } from './token.js';

export type { Resolve, Token } from './token.js';
export { token } from './token.js';

/**
 * A capability (accounts, agents, numbers, webhooks, messaging, …) is one module object that tells the runtime
 * everything about it; `capabilities` in ./index.ts lists them, and the HTTP app, the runtime roles, the
 * migrator, the projection engine and the CLI iterate that list. See docs/adding-a-capability.md.
 */
export interface Capability {
  readonly name: string;
  /** Binds the capability's adapters, queries and use cases (typed factories; see `Bind`). */
  readonly bind?: (b: Bind, cfg: Config) => void;
  /** Routes by audience: `v1` behind API keys, `admin` behind the admin token, `public` guarding themselves. */
  readonly routes?: Readonly<{ v1?: Routes; admin?: Routes; public?: Routes }>;
  readonly projectors?: readonly Projector[];
  /** Process managers and other reactors, each run by a leased reactor runner in worker processes. */
  readonly reactors?: (r: Resolve, cfg: Config) => readonly Reactor[];
  /** Other background work of worker processes (schedulers, the delivery worker). */
  readonly workers?: (r: Resolve, cfg: Config) => readonly BackgroundWorker[];
  /** Background work of the processes that hold calls' lines, ROLE all and voice (the dialler of placed calls). */
  readonly lineWorkers?: (r: Resolve, cfg: Config) => readonly BackgroundWorker[];
  /** Domain events that become public webhook events. */
  readonly webhookMappings?: readonly WebhookMapping[];
  /** Channels of the send path (`POST /v1/messages`), in the order of the capability list (docs/messaging.md#channels). */
  readonly messageChannels?: (r: Resolve) => readonly MessageChannel[];
  /** Transports of the delivery pipeline, one per channel (docs/messaging.md#delivery-one-pipeline, docs/adding-a-channel.md). */
  readonly messageTransports?: (r: Resolve) => readonly MessageTransport[];
  /** Carriers the platform can run on (docs/adding-a-channel.md#a-carrier-for-texts); `CARRIER` chooses one by its name. */
  readonly carriers?: (cfg: Config) => readonly CarrierAdapter[];
  /** Resources whose audit history the API serves (docs/audit.md): each its history view and its route. */
  readonly histories?: (r: Resolve) => readonly HistoryRoute[];
  /** Kysely migrations by name; names sort into one global order (each capability owns a number range). */
  readonly migrations?: Readonly<Record<string, Migration>>;
  /** How the capability's error codes answer over HTTP. */
  readonly errors?: Readonly<Partial<Record<ErrorCode, HttpError>>>;
  /** Readies what must be in place before the process serves or works, in every role and the CLI (e.g. the sandbox clock's offset). */
  readonly start?: (r: Resolve) => Promise<void>;
  /** Releases what the capability holds open (sockets, pools) once the process's workers have stopped. */
  readonly close?: (r: Resolve) => Promise<void> | void;
  /** `npm run cli -- …` commands. */
  readonly cli?: (program: CliProgram, cli: CliSupport) => void;
  /** Connections that leave HTTP for another protocol (a WebSocket), by path: see `UpgradeRoute`. */
  readonly upgrades?: (r: Resolve, cfg: Config) => readonly UpgradeRoute[];
}

export type Routes = (api: Api, r: Resolve) => void;

/**
 * A carrier (docs/adding-a-channel.md#a-carrier-for-texts): its numbers and line-type lookups, and its side of texts
 * (submitting; what it receives and reports goes to messaging's inbound port from its own callback routes).
 */
export type CarrierAdapter = Readonly<{ name: string; numbers: (r: Resolve) => CarrierPort; texts: (r: Resolve) => SmsCarrierPort }>;

/**
 * A resource with an audit history (docs/audit.md): the view that folds its stream, and where the API serves it,
 * `GET <path>` with the resource's id in `param` (`/v1/messages/:message_id/history`, `message_id`; at most `idMax`
 * characters, 100 unless said).
 */
export type HistoryRoute = Readonly<{ view: HistoryView; path: `/v1/${string}/history`; param: string; idMax?: number; what: string }>;

/** Takes over a connection whose request asked to upgrade (`Upgrade: websocket`); it owns the socket from then on. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * One path that accepts protocol upgrades. The HTTP server hands it the requests to that path; `drain` ends what
 * its connections hold before the server closes (an upgraded connection would otherwise keep it open).
 */
export type UpgradeRoute = Readonly<{ path: string; handle: UpgradeHandler; drain?: () => Promise<void> }>;

/**
 * The binding vocabulary of a capability. Application classes are framework-free and built by `factory`
 * (a function of `Resolve`, checked by the compiler); infrastructure classes declare `@inject(TOKEN)` on every
 * constructor parameter and are bound with `toClass` (esbuild emits no decorator metadata).
 */
export type Bind = Readonly<{
  factory: <T>(t: Token<T>, make: (r: Resolve) => T) => void;
  value: <T>(t: Token<T>, v: T) => void;
  toClass: <T>(t: Token<T>, cls: Newable<T>) => void;
  alias: <T>(t: Token<T>, to: Token<T>) => void;
  isBound: (t: Token<unknown>) => boolean;
}>;

export const binder = (c: Container): Bind => ({
  factory: (t, make) => {
    c.bind(t)
      .toDynamicValue((ctx) => make((x) => ctx.get(x)))
      .inSingletonScope();
  },
  value: (t, v) => {
    c.bind(t).toConstantValue(v);
  },
  toClass: (t, cls) => {
    c.bind(t).to(cls).inSingletonScope();
  },
  alias: (t, to) => {
    c.bind(t).toService(to);
  },
  isBound: (t) => c.isBound(t),
});

export const resolver =
  (c: Container): Resolve =>
  (t) =>
    c.get(t);

/** What a capability's CLI commands get: a runtime on the configured stores, and a JSON printer. */
export type CliSupport = Readonly<{
  withRuntime: <T>(f: (rt: { cfg: Config; get: Resolve }) => Promise<T>, o?: { projectors?: boolean }) => Promise<T>;
  print: (v: unknown) => void;
  /** who the CLI acts as in recorded events */
  ctx: { accountId: string; requestId: null; correlationId: string; actor: string };
}>;

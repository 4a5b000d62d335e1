import { RichCapabilities, type RichOptions } from '../../application/rich/rich-capabilities.js';
import { RichChannel } from '../../application/rich/rich-channel.js';
import { RichCommands } from '../../application/rich/rich-commands.js';
import { RichEventsHandler } from '../../application/rich/rich-events.js';
import type { RichEventsPort } from '../../application/rich/rich-provider.port.js';
import { RichProviderProcess } from '../../application/rich/rich-provider-process.js';
import { RichSender } from '../../application/rich/rich-sender.js';
import type { RichErrorCode } from '../../domain/rich/errors.js';
import { richProjector } from '../../projections/rich/rich.projector.js';
import { KyselyRichQueries } from '../../projections/rich/rich.queries.js';
import type { Capability, Resolve } from '../capabilities/capability.js';
import type { Config } from '../config/config.js';
import * as m110 from '../db/migrations/110-rich.js';
import * as m111 from '../db/migrations/111-sandbox-rich.js';
import * as m112 from '../db/migrations/112-sandbox-rich-report-order.js';
import { httpError } from '../http/errors.js';
import { MESSAGING } from '../messaging/tokens.js';
import { NUMBERS } from '../numbers/tokens.js';
import { PLATFORM } from '../platform/tokens.js';
import { SandboxRichProvider } from '../providers/sandbox/sandbox-rich-provider.js';
import { SandboxRichReportWorker } from '../providers/sandbox/sandbox-rich-reports.js';
import { destinations } from '../webhooks/module.js';
import { HttpImageFetcher } from './http-image-fetcher.js';
import { KyselyMediaStore } from './kysely-media-store.js';
import { richRoutes } from './rich.routes.js';
import { sandboxRichCommands } from './sandbox-rich.commands.js';
import { sandboxRichRoutes } from './sandbox-rich.routes.js';
import { RICH } from './tokens.js';
import { UnconfiguredRichProvider } from './unconfigured-rich-provider.js';

/** Which provider runs (docs/configuration.md#rich-messaging): the sandbox in sandbox mode unless told otherwise, else none. */
export const richProviderOf = (cfg: Config): 'sandbox' | 'none' =>
  cfg.RICH_PROVIDER ?? (cfg.PROVIDER_MODE === 'sandbox' ? 'sandbox' : 'none');
const sandboxed = (cfg: Config) => cfg.PROVIDER_MODE === 'sandbox' && richProviderOf(cfg) === 'sandbox';
const optionsOf = (cfg: Config): RichOptions => ({
  capabilityCacheSeconds: cfg.RICH_CAPABILITY_CACHE_SECONDS,
  providerTimeoutMs: cfg.RICH_PROVIDER_TIMEOUT_MS,
  pollAfterSeconds: cfg.RICH_LOCATION_POLL_AFTER_SECONDS,
});
/** The events port, looked up at each use (the sandbox worker and routes are built before anything resolves it). */
const eventsOf = (r: Resolve) => (): RichEventsPort => r(RICH.Events);

/**
 * The rich-messaging channel (docs/rich-messaging.md), `imessage` in the public API: the numbers its provider serves
 * (rich lines), live capability checks, the channel of the send path with the fallback to texts, delivery with read
 * receipts, reactions and typing indicators, contact cards and chat backgrounds (images fetched once behind the
 * webhook URL guard and checked by content), and shared locations; the sandbox provider with its control API, worker
 * and CLI.
 */
export const rich = {
  name: 'rich',
  bind: (b, cfg) => {
    b.factory(RICH.Queries, (r) => new KyselyRichQueries(r(PLATFORM.ReadDb)));
    b.factory(RICH.Media, (r) => new KyselyMediaStore(r(PLATFORM.ReadDb) as never));
    b.value(RICH.Fetcher, new HttpImageFetcher({ destinations: destinations(cfg), timeoutMs: cfg.RICH_MEDIA_FETCH_TIMEOUT_MS }));
    if (sandboxed(cfg)) {
      b.toClass(RICH.SandboxProvider, SandboxRichProvider);
      b.alias(RICH.Provider, RICH.SandboxProvider);
    } else b.value(RICH.Provider, new UnconfiguredRichProvider());
    b.factory(
      RICH.Capabilities,
      (r) => new RichCapabilities(r(PLATFORM.Executor), r(PLATFORM.Ids), r(RICH.Queries), r(NUMBERS.Queries), optionsOf(cfg)),
    );
    b.factory(
      RICH.Commands,
      (r) =>
        new RichCommands(
          r(PLATFORM.Executor),
          r(PLATFORM.Ids),
          r(RICH.Queries),
          r(NUMBERS.Queries),
          r(MESSAGING.Queries),
          r(RICH.Capabilities),
          optionsOf(cfg),
        ),
    );
    b.factory(
      RICH.Channel,
      (r) =>
        new RichChannel(r(PLATFORM.Executor), r(PLATFORM.Ids), r(MESSAGING.Queries), r(MESSAGING.Settings), r(RICH.Capabilities), () =>
          r(RICH.Commands),
        ),
    );
    b.factory(RICH.Events, (r) => new RichEventsHandler(r(PLATFORM.Executor), r(PLATFORM.Ids), r(NUMBERS.Queries), r(PLATFORM.Logger)));
  },
  routes: {
    v1: (api, r) => richRoutes(api, { commands: r(RICH.Commands), capabilities: r(RICH.Capabilities) }),
    public: (api, r) => {
      if (sandboxed(r(PLATFORM.Config)))
        sandboxRichRoutes(api, { provider: r(RICH.SandboxProvider), events: eventsOf(r), clock: r(PLATFORM.Clock) });
    },
  },
  projectors: [richProjector],
  messageChannels: (r) => [r(RICH.Channel)],
  reactors: (r) => [
    new RichSender(r(PLATFORM.Executor), r(RICH.Provider), r(PLATFORM.Logger)),
    new RichProviderProcess(r(PLATFORM.Executor), r(PLATFORM.Ids), r(RICH.Provider), r(RICH.Fetcher), r(RICH.Media), r(PLATFORM.Logger)),
  ],
  workers: (r, cfg) =>
    sandboxed(cfg)
      ? [
          new SandboxRichReportWorker(r(RICH.SandboxProvider), eventsOf(r), r(PLATFORM.Clock), r(PLATFORM.Logger), {
            pollIntervalMs: cfg.SANDBOX_RICH_POLL_INTERVAL_MS,
            leaseMs: cfg.SANDBOX_RICH_REPORT_LEASE_MS,
          }),
        ]
      : [],
  migrations: { '110-rich': m110, '111-sandbox-rich': m111, '112-sandbox-rich-report-order': m112 },
  errors: {
    RICH_CHANNEL_UNAVAILABLE: {
      ...httpError.unprocessable,
      fix: 'Use a number the rich-messaging provider serves (docs/rich-messaging.md#lines), or send by sms.',
    },
    RICH_MEDIA_REJECTED: {
      ...httpError.unprocessable,
      fix: 'Give the public URL of a JPEG, PNG, GIF, WebP or HEIC image of at most 10 MB.',
    },
    RICH_PROVIDER_ERROR: { ...httpError.upstream, type: 'provider_error', fix: 'Retry shortly.' },
    LOCATION_NOT_FOUND: {
      ...httpError.notFound,
      fix: 'POST /v1/location/refresh, wait pollAfterSeconds, then read again; only contacts who share a location with your numbers are known.',
    },
  } satisfies Record<RichErrorCode, unknown>,
  cli: sandboxRichCommands,
} as const satisfies Capability;

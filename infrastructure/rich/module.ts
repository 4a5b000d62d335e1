import { RichCapabilities, type RichOptions } from '../../application/rich/rich-capabilities.js';
import { RichChannel } from '../../application/rich/rich-channel.js';
import { RichCommands } from '../../application/rich/rich-commands.js';
import { RichEventsHandler } from '../../application/rich/rich-events.js';
import { RichProviderProcess } from '../../application/rich/rich-provider-process.js';
import { RichTransport } from '../../application/rich/rich-transport.js';
import type { RichErrorCode } from '../../domain/rich/errors.js';
import { richProjector } from '../../projections/rich/rich.projector.js';
import { KyselyRichQueries } from '../../projections/rich/rich.queries.js';
import type { Capability } from '../capabilities/capability.js';
import type { Config } from '../config/config.js';
import { sandboxParts } from '../config/providers.js';
import * as m110 from '../db/migrations/110-rich.js';
import { httpError } from '../http/errors.js';
import { MESSAGING } from '../messaging/tokens.js';
import { NUMBERS } from '../numbers/tokens.js';
import { PLATFORM } from '../platform/tokens.js';
import { SANDBOX } from '../sandbox/tokens.js';
import { destinations } from '../webhooks/module.js';
import { HttpImageFetcher } from './http-image-fetcher.js';
import { KyselyMediaStore } from './kysely-media-store.js';
import { richRoutes } from './rich.routes.js';
import { RICH } from './tokens.js';
import { UnconfiguredRichProvider } from './unconfigured-rich-provider.js';

const optionsOf = (cfg: Config): RichOptions => ({
  capabilityCacheSeconds: cfg.RICH_CAPABILITY_CACHE_SECONDS,
  providerTimeoutMs: cfg.RICH_PROVIDER_TIMEOUT_MS,
  pollAfterSeconds: cfg.RICH_LOCATION_POLL_AFTER_SECONDS,
});

/**
 * The rich-messaging channel (docs/rich-messaging.md), `imessage` in the public API: the numbers its provider serves
 * (rich lines), live capability checks, the channel of the send path with the fallback to texts, delivery with read
 * receipts, reactions and typing indicators, contact cards and chat backgrounds (images fetched once behind the
 * webhook URL guard and checked by content), and shared locations; the sandbox kit's provider in sandbox mode.
 */
export const rich = {
  name: 'rich',
  bind: (b, cfg) => {
    b.factory(RICH.Queries, (r) => new KyselyRichQueries(r(PLATFORM.ReadDb), r(PLATFORM.KeptReads)(richProjector.name)));
    b.factory(RICH.Media, (r) => new KyselyMediaStore(r(PLATFORM.ReadDb)));
    b.value(RICH.Fetcher, new HttpImageFetcher({ destinations: destinations(cfg), timeoutMs: cfg.RICH_MEDIA_FETCH_TIMEOUT_MS }));
    if (sandboxParts(cfg).rich) b.alias(RICH.Provider, SANDBOX.RichProvider);
    else b.value(RICH.Provider, new UnconfiguredRichProvider());
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
    b.factory(RICH.Events, (r) => new RichEventsHandler(r(PLATFORM.Executor), r(NUMBERS.Queries), r(PLATFORM.Logger)));
    b.factory(
      RICH.Transport,
      (r) => new RichTransport(r(PLATFORM.Executor), r(PLATFORM.Ids), r(RICH.Provider), r(NUMBERS.Queries), r(PLATFORM.Logger)),
    );
  },
  routes: {
    v1: (api, r) => richRoutes(api, { commands: r(RICH.Commands), capabilities: r(RICH.Capabilities) }),
  },
  projectors: [richProjector],
  messageChannels: (r) => [r(RICH.Channel)],
  messageTransports: (r) => [r(RICH.Transport)],
  reactors: (r) => [
    new RichProviderProcess(r(PLATFORM.Executor), r(PLATFORM.Ids), r(RICH.Provider), r(RICH.Fetcher), r(RICH.Media), r(PLATFORM.Logger)),
  ],
  migrations: { '110-rich': m110 },
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
} as const satisfies Capability;

import type { RichCapabilities } from '../../application/rich/rich-capabilities.js';
import type { RichChannel } from '../../application/rich/rich-channel.js';
import type { RichCommands } from '../../application/rich/rich-commands.js';
import type { RichEventsHandler } from '../../application/rich/rich-events.js';
import type { ImageFetcherPort, MediaStorePort, RichProviderPort } from '../../application/rich/rich-provider.port.js';
import type { RichQueries } from '../../application/rich/rich-queries.port.js';
import type { RichTransport } from '../../application/rich/rich-transport.js';
import { token } from '../capabilities/token.js';

/** The rich-messaging channel's tokens (its module binds them). */
export const RICH = {
  Queries: token<RichQueries>('RichQueries'),
  Capabilities: token<RichCapabilities>('RichCapabilities'),
  Commands: token<RichCommands>('RichCommands'),
  Channel: token<RichChannel>('RichChannel'),
  /** the channel's transport of the delivery pipeline */
  Transport: token<RichTransport>('RichTransport'),
  /** the provider: the sandbox provider, or none (docs/rich-messaging.md#the-provider) */
  Provider: token<RichProviderPort>('RichProvider'),
  Events: token<RichEventsHandler>('RichEvents'),
  Fetcher: token<ImageFetcherPort>('RichImageFetcher'),
  Media: token<MediaStorePort>('RichMediaStore'),
} as const;

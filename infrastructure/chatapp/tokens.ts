import type { ChatappEventsPort, ChatPlatformPort, TokenSealerPort } from '../../application/chatapp/chat-platform.port.js';
import type { ChatappChannel } from '../../application/chatapp/chatapp-channel.js';
import type { ChatappCommands } from '../../application/chatapp/chatapp-commands.js';
import type { ChatappEventsHandler } from '../../application/chatapp/chatapp-events.js';
import type { ChatappQueries } from '../../application/chatapp/chatapp-queries.port.js';
import type { ChatappSettingsService } from '../../application/chatapp/chatapp-settings.js';
import type { ChatappTransport } from '../../application/chatapp/chatapp-transport.js';
import { token } from '../capabilities/token.js';

/** The chat-application channel's tokens (its module binds them). */
export const CHATAPP = {
  Queries: token<ChatappQueries>('ChatappQueries'),
  Settings: token<ChatappSettingsService>('ChatappSettings'),
  Sealer: token<TokenSealerPort>('ChatappTokenSealer'),
  /** the platform: the sandbox platform, or the cloud API (docs/chatapp.md#the-platform) */
  Platform: token<ChatPlatformPort>('ChatPlatform'),
  Commands: token<ChatappCommands>('ChatappCommands'),
  Channel: token<ChatappChannel>('ChatappChannel'),
  /** the channel's transport of the delivery pipeline */
  Transport: token<ChatappTransport>('ChatappTransport'),
  Events: token<ChatappEventsHandler>('ChatappEvents'),
  /** where the platform's adapters (the sandbox, the webhook callback) hand what the platform reports */
  EventsPort: token<ChatappEventsPort>('ChatappEventsPort'),
} as const;

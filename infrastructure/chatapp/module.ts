import type { ChatappEventsPort } from '../../application/chatapp/chat-platform.port.js';
import { ChatappChannel } from '../../application/chatapp/chatapp-channel.js';
import { ChatappCommands } from '../../application/chatapp/chatapp-commands.js';
import { ChatappEventsHandler } from '../../application/chatapp/chatapp-events.js';
import { ChatappSettingsService } from '../../application/chatapp/chatapp-settings.js';
import { ChatappSetup } from '../../application/chatapp/chatapp-setup.js';
import { ChatappTransport } from '../../application/chatapp/chatapp-transport.js';
import type { ChatappErrorCode } from '../../domain/chatapp/errors.js';
import { chatappProjector } from '../../projections/chatapp/chatapp.projector.js';
import { KyselyChatappQueries } from '../../projections/chatapp/chatapp.queries.js';
import { ACCOUNTS } from '../accounts/tokens.js';
import { AesGcmSealer } from '../adapters/sealed-secrets.js';
import { secretKeys } from '../adapters/secret-keys.js';
import type { Capability, Resolve } from '../capabilities/capability.js';
import { chatappProviderOf, sandboxParts } from '../config/providers.js';
import * as m100 from '../db/migrations/100-chatapp.js';
import { httpError } from '../http/errors.js';
import { MESSAGING } from '../messaging/tokens.js';
import { NUMBERS } from '../numbers/tokens.js';
import { PLATFORM } from '../platform/tokens.js';
import { SANDBOX } from '../sandbox/tokens.js';
import { chatappAdminRoutes, chatappRoutes } from './chatapp.routes.js';
import { CloudChatPlatform } from './cloud-chat-platform.js';
import { platformWebhookRoutes } from './platform-webhook.routes.js';
import { CHATAPP } from './tokens.js';
import { UnconfiguredChatPlatform } from './unconfigured-chat-platform.js';

/** The events port, looked up at each use (the webhook routes are built before anything resolves it). */
const eventsOf = (r: Resolve) => (): ChatappEventsPort => r(CHATAPP.EventsPort);

/**
 * The chat-application channel (docs/chatapp.md): connections to business accounts of a chat platform (tokens sealed),
 * bound numbers (dual-channel with a native number of the same E.164), templates reviewed by the platform, the
 * channel of the send path (the 24-hour window and templates decided by the conversation), its transport of the
 * delivery pipeline, the setup process manager, template reviews the platform reports, the account's switch,
 * and the platform's adapters: the sandbox kit's platform, or the cloud API with its signed webhook callback.
 */
export const chatapp = {
  name: 'chatapp',
  bind: (b, cfg) => {
    b.factory(CHATAPP.Queries, (r) => new KyselyChatappQueries(r(PLATFORM.ReadDb), r(PLATFORM.KeptReads)(chatappProjector.name)));
    b.factory(CHATAPP.Settings, (r) => new ChatappSettingsService(r(PLATFORM.Executor)));
    b.value(CHATAPP.Sealer, new AesGcmSealer(secretKeys(cfg.SECRETS_KEY).chatappTokens, 'chat platform access token'));
    if (sandboxParts(cfg).chatapp) b.alias(CHATAPP.Platform, SANDBOX.ChatPlatform);
    else if (cfg.CHATAPP_API_BASE_URL && cfg.CHATAPP_MESSAGING_PRODUCT && chatappProviderOf(cfg) === 'cloud') {
      const o = {
        baseUrl: cfg.CHATAPP_API_BASE_URL,
        messagingProduct: cfg.CHATAPP_MESSAGING_PRODUCT,
        timeoutMs: cfg.CHATAPP_REQUEST_TIMEOUT_MS,
      };
      b.value(CHATAPP.Platform, new CloudChatPlatform(o));
    } else b.value(CHATAPP.Platform, new UnconfiguredChatPlatform());
    b.factory(
      CHATAPP.Commands,
      (r) =>
        new ChatappCommands(r(PLATFORM.Executor), r(PLATFORM.Ids), r(CHATAPP.Queries), r(CHATAPP.Settings), r(CHATAPP.Sealer), {
          platformTimeoutMs: cfg.CHATAPP_SETUP_TIMEOUT_MS,
        }),
    );
    b.factory(
      CHATAPP.Channel,
      (r) =>
        new ChatappChannel(
          r(PLATFORM.Executor),
          r(PLATFORM.Ids),
          r(CHATAPP.Queries),
          r(NUMBERS.Queries),
          r(MESSAGING.Queries),
          r(CHATAPP.Settings),
        ),
    );
    b.factory(
      CHATAPP.Transport,
      (r) =>
        new ChatappTransport(
          r(PLATFORM.Executor),
          r(PLATFORM.Ids),
          r(CHATAPP.Platform),
          r(CHATAPP.Sealer),
          r(CHATAPP.Queries),
          r(CHATAPP.Settings),
          r(PLATFORM.Logger),
        ),
    );
    b.factory(
      CHATAPP.Events,
      (r) => new ChatappEventsHandler(r(PLATFORM.Executor), r(CHATAPP.Queries), r(PLATFORM.ReadModels), r(PLATFORM.EventStore)),
    );
    b.alias(CHATAPP.EventsPort, CHATAPP.Events);
  },
  routes: {
    v1: (api, r) => chatappRoutes(api, { commands: r(CHATAPP.Commands), settings: r(CHATAPP.Settings) }),
    admin: (api, r) => chatappAdminRoutes(api, { settings: r(CHATAPP.Settings), accounts: r(ACCOUNTS.Queries) }),
    public: (api, r) => {
      const cfg = r(PLATFORM.Config);
      if (cfg.CHATAPP_APP_SECRET)
        platformWebhookRoutes(api, {
          events: eventsOf(r),
          messages: () => r(MESSAGING.Inbound),
          appSecret: cfg.CHATAPP_APP_SECRET,
          verifyToken: cfg.CHATAPP_VERIFY_TOKEN,
          mediaUrl: (id) => `${(cfg.CHATAPP_API_BASE_URL ?? '').replace(/\/+$/, '')}/${id}`,
        });
    },
  },
  projectors: [chatappProjector],
  messageChannels: (r) => [r(CHATAPP.Channel)],
  messageTransports: (r) => [r(CHATAPP.Transport)],
  reactors: (r) => [
    new ChatappSetup(
      r(PLATFORM.Executor),
      r(CHATAPP.Platform),
      r(CHATAPP.Sealer),
      r(CHATAPP.Queries),
      r(NUMBERS.Queries),
      r(PLATFORM.ReadModels),
    ),
  ],
  migrations: { '100-chatapp': m100 },
  errors: {
    // the envelope, not the plain body of other 403s: the specification names it as a code, which clients tell apart by
    CHATAPP_NOT_ENABLED: {
      status: 403,
      shape: 'envelope' as const,
      type: 'permission_error',
      fix: 'An operator or the account switches it on (PATCH /integrations/chatapp/settings).',
    },
    CHATAPP_CONNECTION_NOT_FOUND: {
      ...httpError.notFound,
      fix: 'Check the connection id: GET /integrations/chatapp/connections lists them.',
    },
    CHATAPP_NUMBER_NOT_FOUND: {
      ...httpError.notFound,
      fix: "Check the number's id: GET /integrations/chatapp/{connection_id}/numbers lists them.",
    },
    CHATAPP_TEMPLATE_NOT_FOUND: { ...httpError.notFound, fix: 'GET /integrations/chatapp/{connection_id}/templates lists the templates.' },
    CHATAPP_NUMBER_IN_USE: { ...httpError.conflict, fix: '' },
    CHATAPP_TEMPLATE_EXISTS: { ...httpError.conflict, fix: '' },
    CHATAPP_TEMPLATE_NOT_APPROVED: { ...httpError.conflict, fix: 'GET /integrations/chatapp/{connection_id}/templates shows its status.' },
    CHATAPP_PLATFORM_REFUSED: { ...httpError.unprocessable, fix: '' },
    CHATAPP_SEND_REFUSED: { ...httpError.invalidRequest, fix: '' },
  } satisfies Record<ChatappErrorCode, unknown>,
} as const satisfies Capability;

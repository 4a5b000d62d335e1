import { InboundMessages } from '../../application/messaging/delivery/inbound-messages.js';
import { MessageDelivery } from '../../application/messaging/delivery/message-delivery.js';
import { MessageTransports } from '../../application/messaging/delivery/message-transports.js';
import { MessageChannels } from '../../application/messaging/message-channels.js';
import { MessageCommands } from '../../application/messaging/message-commands.js';
import { conversationHistory, messageHistory } from '../../application/messaging/messaging.histories.js';
import { messagingWebhookMappings } from '../../application/messaging/messaging.mappings.js';
import { MessagingSettingsService } from '../../application/messaging/messaging-settings.js';
import { SendRateLimiter } from '../../application/messaging/send-rate.js';
import { SmsChannel } from '../../application/messaging/sms-channel.js';
import { SmsTransport } from '../../application/messaging/sms-transport.js';
import type { MessagingErrorCode } from '../../domain/conversation/errors.js';
import { KyselyConversationQueries } from '../../projections/messaging/conversation.queries.js';
import { messagingProjector } from '../../projections/messaging/messaging.projector.js';
import { ACCOUNTS } from '../accounts/tokens.js';
import { AGENTS } from '../agents/tokens.js';
import type { Capability } from '../capabilities/capability.js';
import { registerUrlOf } from '../config/config.js';
import { CONTACTS } from '../contacts/tokens.js';
import * as m070 from '../db/migrations/070-messaging.js';
import * as m071 from '../db/migrations/071-opt-out-revisions.js';
import * as m072 from '../db/migrations/072-carrier-ids-by-channel.js';
import { httpError } from '../http/errors.js';
import { NUMBERS } from '../numbers/tokens.js';
import { PLATFORM } from '../platform/tokens.js';
import { REGISTRATION } from '../registration/tokens.js';
import { WEBHOOKS } from '../webhooks/tokens.js';
import { MessagingConversationContext } from './conversation-context.js';
import { KyselyIdempotencyStore } from './kysely-idempotency-store.js';
import { messagingRoutes } from './messaging.routes.js';
import { messagingAdminRoutes } from './messaging-admin.routes.js';
import { MESSAGING } from './tokens.js';
import { UnconfiguredSmsCarrier } from './unconfigured-sms-carrier.js';

const replyAfterReply = 'Sending resumes when the recipient replies; this cap does not clear on retry.';

/**
 * Text messaging (docs/messaging.md): sends and their caps, conversations and their read models, the send path's
 * channel list (texts are its first channel: docs/messaging.md#channels), the one delivery pipeline of every channel
 * (MessageDelivery) with the texts' transport to the carrier, the one handler of what every provider reports
 * (InboundMessages: inbound messages, reactions, receipts; opt-out keywords on texts), `agent.message` /
 * `agent.reaction` webhook events, and the conversation context of every webhook payload.
 */
export const messaging = {
  name: 'messaging',
  bind: (b, cfg) => {
    // the carrier CARRIER chooses (docs/adding-a-channel.md#a-carrier-for-texts); none: every text fails as not enabled
    b.factory(MESSAGING.Carrier, (r) => r(PLATFORM.Carrier)?.texts(r) ?? new UnconfiguredSmsCarrier());
    b.factory(MESSAGING.KyselyQueries, (r) => new KyselyConversationQueries(r(PLATFORM.ReadDb)));
    b.alias(MESSAGING.Queries, MESSAGING.KyselyQueries);
    b.factory(MESSAGING.QueriesTogether, (r) => new KyselyConversationQueries(r(PLATFORM.ReadTogether)));
    b.factory(MESSAGING.Settings, (r) => new MessagingSettingsService(r(PLATFORM.Executor)));
    b.factory(
      MESSAGING.SendRate,
      (r) => new SendRateLimiter(r(PLATFORM.Clock), { perSecond: cfg.MESSAGE_SEND_RATE_PER_SECOND, burst: cfg.MESSAGE_SEND_BURST }),
    );
    b.toClass(MESSAGING.Idempotency, KyselyIdempotencyStore);
    b.factory(
      MESSAGING.SmsChannel,
      (r) => new SmsChannel(r(PLATFORM.Executor), r(PLATFORM.Ids), r(MESSAGING.Queries), r(MESSAGING.Settings), r(MESSAGING.SendRate)),
    );
    b.factory(MESSAGING.Channels, (r) => new MessageChannels(r(PLATFORM.MessageChannels)));
    b.factory(
      MESSAGING.Commands,
      (r) => new MessageCommands(r(PLATFORM.Executor), r(PLATFORM.Ids), r(NUMBERS.Queries), r(MESSAGING.Queries), r(MESSAGING.Channels)),
    );
    b.factory(
      MESSAGING.SmsTransport,
      (r) =>
        new SmsTransport(
          r(PLATFORM.Executor),
          r(PLATFORM.Ids),
          r(MESSAGING.Carrier),
          r(REGISTRATION.Status),
          r(NUMBERS.Queries),
          r(PLATFORM.Logger),
          {
            registerUrl: registerUrlOf(cfg),
          },
        ),
    );
    b.factory(MESSAGING.Transports, (r) => new MessageTransports(r(PLATFORM.MessageTransports)));
    b.factory(
      MESSAGING.Inbound,
      (r) =>
        new InboundMessages(
          r(PLATFORM.Executor),
          r(PLATFORM.Ids),
          r(MESSAGING.Transports),
          // a provider's reports come side by side (the sandbox's, a claim's at once): their look-ups go together
          r(MESSAGING.QueriesTogether),
          r(MESSAGING.Settings),
          r(PLATFORM.ReadModels),
          r(PLATFORM.Logger),
        ),
    );
    // its three reads, awaited together, go to the database together (docs/webhooks.md#payload-context)
    b.factory(
      WEBHOOKS.ConversationContext,
      (r) => new MessagingConversationContext(r(MESSAGING.QueriesTogether), r(CONTACTS.LookupTogether)),
    );
  },
  routes: {
    v1: (api, r) =>
      messagingRoutes(api, {
        commands: r(MESSAGING.Commands),
        queries: r(MESSAGING.Queries),
        channels: r(MESSAGING.Channels),
        numbers: r(NUMBERS.Queries),
        agents: r(AGENTS.Queries),
        idempotency: r(MESSAGING.Idempotency),
        clock: r(PLATFORM.Clock),
        ids: r(PLATFORM.Ids),
      }),
    admin: (api, r) => messagingAdminRoutes(api, { settings: r(MESSAGING.Settings), accounts: r(ACCOUNTS.Queries) }),
  },
  // texts are counted by the analytics projectors (infrastructure/analytics/module.ts); 070's message_stats_daily is dropped by 120
  projectors: [messagingProjector],
  messageChannels: (r) => [r(MESSAGING.SmsChannel)],
  messageTransports: (r) => [r(MESSAGING.SmsTransport)],
  reactors: (r) => [new MessageDelivery(r(PLATFORM.Executor), r(MESSAGING.Transports), r(PLATFORM.Logger))],
  webhookMappings: messagingWebhookMappings,
  histories: (r) => [
    { view: messageHistory(r(MESSAGING.Queries)), path: '/v1/messages/:message_id/history', param: 'message_id', what: 'a message' },
    { view: conversationHistory, path: '/v1/conversations/:conversation_id/history', param: 'conversation_id', what: 'a conversation' },
  ],
  migrations: { '070-messaging': m070, '071-opt-out-revisions': m071, '072-carrier-ids-by-channel': m072 },
  errors: {
    CONVERSATION_NOT_FOUND: { ...httpError.notFound, fix: 'Check the conversation id: GET /v1/conversations lists them.' },
    MESSAGE_NOT_FOUND: { ...httpError.notFound, fix: 'Check the message id: GET /v1/conversations/{id}/messages lists them.' },
    CONVERSATION_AWAITING_REPLY: { ...httpError.rateLimited, fix: replyAfterReply },
    CONVERSATION_STREAK_LIMIT: { ...httpError.rateLimited, fix: replyAfterReply },
    CONVERSATION_INACTIVE: { ...httpError.rateLimited, fix: replyAfterReply },
    OUTBOUND_LIMIT_REACHED: { ...httpError.rateLimited, fix: 'This cap does not clear on retry.' },
    NEW_CONVERSATION_LIMIT_REACHED: {
      ...httpError.rateLimited,
      fix: 'This cap does not clear on retry.',
    },
    INBOUND_ONLY: { ...httpError.unprocessable, fix: 'Wait for the recipient to text this number first, or send from another number.' },
    IDEMPOTENCY_KEY_REUSED: { ...httpError.unprocessable, fix: 'Use a new Idempotency-Key for a different request.' },
    IDEMPOTENCY_KEY_IN_USE: { ...httpError.conflict, fix: 'Retry after the first request with this key has been answered.' },
    MESSAGE_PROVIDER_ERROR: { ...httpError.upstream, fix: 'The operation may have been done upstream: check its state before you retry.' },
  } satisfies Record<MessagingErrorCode, unknown>,
} as const satisfies Capability;

import type { ConversationQueries } from '../../application/messaging/conversation-queries.port.js';
import type { MessageTransports } from '../../application/messaging/delivery/message-transports.js';
import type { MessagingInboundPort } from '../../application/messaging/delivery/transport.port.js';
import type { IdempotencyStorePort } from '../../application/messaging/idempotency.port.js';
import type { MessageChannels } from '../../application/messaging/message-channels.js';
import type { MessageCommands } from '../../application/messaging/message-commands.js';
import type { MessagingSettingsService } from '../../application/messaging/messaging-settings.js';
import type { SendRateLimiter } from '../../application/messaging/send-rate.js';
import type { SmsCarrierPort } from '../../application/messaging/sms-carrier.port.js';
import type { SmsChannel } from '../../application/messaging/sms-channel.js';
import type { SmsTransport } from '../../application/messaging/sms-transport.js';
import type { KyselyConversationQueries } from '../../projections/messaging/conversation.queries.js';
import { token } from '../capabilities/token.js';

/** The messaging capability's tokens (its module binds them). */
export const MESSAGING = {
  Queries: token<ConversationQueries>('ConversationQueries'),
  KyselyQueries: token<KyselyConversationQueries>('KyselyConversationQueries'),
  /** the same queries, for reads awaited with others (docs/event-store.md#reads-together) */
  QueriesTogether: token<KyselyConversationQueries>('ConversationQueriesTogether'),
  Commands: token<MessageCommands>('MessageCommands'),
  /** texts as a channel of the send path */
  SmsChannel: token<SmsChannel>('SmsChannel'),
  /** every channel of the send path (texts, then the other capabilities' channels) */
  Channels: token<MessageChannels>('MessageChannels'),
  Settings: token<MessagingSettingsService>('MessagingSettings'),
  SendRate: token<SendRateLimiter>('SendRateLimiter'),
  Idempotency: token<IdempotencyStorePort>('IdempotencyStore'),
  /** the carrier's messaging side: the sandbox carrier in sandbox mode */
  Carrier: token<SmsCarrierPort>('SmsCarrier'),
  /** texts as a transport of the delivery pipeline */
  SmsTransport: token<SmsTransport>('SmsTransport'),
  /** every transport of the delivery pipeline (texts, then the other capabilities') */
  Transports: token<MessageTransports>('MessageTransports'),
  /** where every provider adapter hands what it receives and reports: inbound messages, reactions, receipts */
  Inbound: token<MessagingInboundPort>('MessagingInbound'),
} as const;

import { AREA_CODES, PREMIUM_CODES, TOLL_FREE_CODES } from '../../domain/phone-number/north-american-area-codes.js';
import { E164 } from '../agents/agent.schemas.js';
import { z } from '../http/openapi.js';

/** Limits of a send (docs/messaging.md#sending). */
export const MAX_BODY = 1600;
/** the most media URLs the request takes: a carousel of the imessage channel; each channel checks its own limit */
export const MAX_MEDIA = 20;
export const MAX_GROUP = 20;
export const SEND_STYLES = [
  'celebration',
  'fireworks',
  'lasers',
  'love',
  'confetti',
  'balloons',
  'spotlight',
  'echo',
  'invisible',
  'gentle',
  'loud',
  'slam',
] as const;

/** A US or Canadian number in E.164: +1, then an area code of either country (toll-free and premium included). */
export const NanpE164 = z
  .string()
  .regex(/^\+1[2-9]\d{2}[2-9]\d{6}$/, 'must be a US or Canadian phone number in E.164, such as +14155550123')
  .refine((v) => {
    const ac = v.slice(2, 5);
    return AREA_CODES.has(ac) || TOLL_FREE_CODES.has(ac) || PREMIUM_CODES.has(ac);
  }, 'only US and Canadian numbers can be texted');

const HttpsUrl = z.url({ protocol: /^https?$/ }).max(2048);

/** The channels a send may name (docs/messaging.md#channels); each is a MessageChannel of its capability. */
export const SEND_CHANNELS = ['sms', 'chatapp', 'imessage'] as const;

const TemplateValue = z.string().max(1024);
export const SendTemplate = z
  .object({
    name: z.string().min(1).max(512),
    language: z.string().min(2).max(16),
    variables: z
      .union([z.array(TemplateValue).max(100), z.record(z.string().min(1).max(64), TemplateValue)])
      .nullish()
      .openapi({ description: 'an array for a positional template ({{1}}, {{2}}, …), an object for a named one ({{order_id}})' }),
  })
  .openapi('SendTemplate', { description: 'an approved chat-app template (docs/chatapp.md#sending-a-template)' });

export const SendMessageRequest = z
  .object({
    agent_id: z.string().min(1).max(100).nullish(),
    number_id: z.string().min(1).max(100).nullish(),
    // texts take US and Canadian numbers only (the sms channel says so); a chat-app number or recipient may be any E.164
    from_number: E164.nullish(),
    to_number: E164.nullish(),
    recipients: z.array(NanpE164).min(1).max(MAX_GROUP).nullish(),
    body: z.string().max(MAX_BODY).default(''),
    media_url: HttpsUrl.nullish().openapi({ description: 'deprecated: use media_urls' }),
    media_urls: z.array(HttpsUrl).max(MAX_MEDIA).nullish(),
    send_style: z.enum(SEND_STYLES).nullish(),
    reply_to_message_id: z.string().min(1).max(100).nullish(),
    channel: z
      .enum(SEND_CHANNELS)
      .nullish()
      .openapi({ description: "default: the channel of the recipient's most recent conversation on the number, else sms" }),
    template: SendTemplate.nullish(),
  })
  .superRefine((b, ctx) => {
    const media = !!b.media_url || !!(b.media_urls && b.media_urls.length > 0);
    if (!b.to_number && !b.recipients)
      ctx.addIssue({ code: 'custom', path: ['to_number'], message: 'to_number (or recipients for a group) is required' });
    if (b.to_number && b.recipients)
      ctx.addIssue({ code: 'custom', path: ['recipients'], message: 'give to_number or recipients, not both' });
    if (b.template) {
      if (b.body.trim() !== '') ctx.addIssue({ code: 'custom', path: ['body'], message: 'give body or template, not both' });
      if (media) ctx.addIssue({ code: 'custom', path: ['media_urls'], message: 'a template send carries no media' });
      if (b.recipients) ctx.addIssue({ code: 'custom', path: ['recipients'], message: 'a template goes to one recipient (to_number)' });
      if (b.channel && b.channel !== 'chatapp')
        ctx.addIssue({ code: 'custom', path: ['channel'], message: 'templates go by the chatapp channel' });
    } else if (b.body.trim() === '' && !media)
      ctx.addIssue({ code: 'custom', path: ['body'], message: 'body must not be empty unless media is attached' });
  })
  .openapi('SendMessageRequest');

export const SendMessageResponse = z
  .object({
    id: z.string(),
    status: z.string(),
    channel: z.string(),
    from_number: z.string(),
    to_number: z.string(),
    conversation_id: z.string().nullable(),
    media_urls: z.array(z.string()),
    reply_to_message_id: z.string().nullable(),
    reply_parent_unresolved: z.boolean().nullable(),
    recipients: z.array(z.string()).nullable(),
    encoding: z
      .enum(['GSM-7', 'UCS-2'])
      .nullable()
      .openapi({ description: 'GSM-7 fits 160 characters a segment (153 when split); UCS-2 fits 70 (67); null on the chatapp channel' }),
    segments: z.number().int().nullable().openapi({ description: 'billable SMS segments of the body; null on the chatapp channel' }),
  })
  .openapi('SendMessageResponse');

export const Reaction = z
  .object({ id: z.string(), reactionType: z.string(), fromNumber: z.string(), direction: z.string(), createdAt: z.string() })
  .openapi('ReactionInConversation');

export const ReplyTo = z
  .object({ messageId: z.string(), message: z.string(), mediaUrls: z.array(z.string()) })
  .openapi('ReplyToInConversation');

export const MessageInConversation = z
  .object({
    id: z.string(),
    body: z.string(),
    fromNumber: z.string(),
    toNumber: z.string(),
    direction: z.string(),
    senderIdentifier: z.string().nullable(),
    channel: z.string().nullable(),
    status: z.string().nullable(),
    failureReason: z.string().nullable(),
    errorCode: z.string().nullable(),
    failureCategory: z.string().nullable(),
    retryable: z.boolean().nullable(),
    encoding: z.string().nullable(),
    segments: z.number().int().nullable(),
    deliveredAt: z.string().nullable(),
    readAt: z.string().nullable(),
    mediaUrl: z.string().nullable(),
    mediaUrls: z.array(z.string()),
    content: z.record(z.string(), z.unknown()).nullable(),
    receivedAt: z.string(),
    reactions: z.array(Reaction),
    replyTo: ReplyTo.nullable(),
    conversationId: z.string().nullable(),
  })
  .openapi('MessageInConversation');

export const Capabilities = z
  .object({
    canSendMessages: z.boolean(),
    media: z.boolean(),
    reactions: z.boolean(),
    emojiReactions: z.boolean(),
    sendDisabledReason: z.string().nullable(),
    sendChannel: z.string().nullable(),
    availableChannels: z.array(z.string()),
    mediaChannels: z.array(z.string()),
    chatappWindowExpiresAt: z.string().nullable(),
  })
  .openapi('ConversationCapabilities');

export const GroupParticipant = z.object({ identifier: z.string(), name: z.string().nullable() }).openapi('GroupParticipant');

const conversationFields = {
  id: z.string(),
  agentId: z.string().nullable(),
  phoneNumberId: z.string(),
  phoneNumber: z.string(),
  participant: z.string(),
  channel: z.string(),
  isGroup: z.boolean(),
  groupId: z.string().nullable(),
  groupName: z.string().nullable(),
  groupIconUrl: z.string().nullable(),
  participants: z.array(GroupParticipant).nullable(),
  lastMessageAt: z.string(),
  lastMessagePreview: z.string(),
  messageCount: z.number().int(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  conversationState: z.record(z.string(), z.unknown()).nullable(),
  createdAt: z.string(),
};

export const ConversationSummary = z.object(conversationFields).openapi('ConversationSummary');
export const ConversationDetail = z
  .object({ ...conversationFields, messages: z.array(MessageInConversation), capabilities: Capabilities })
  .openapi('ConversationDetail');

export const ConversationIdParams = z.object({ conversation_id: z.string().min(1).max(100) });
export const MessageIdParams = z.object({ message_id: z.string().min(1).max(100) });

const State = z.record(z.string(), z.unknown()).nullable();
export const UpdateConversationRequest = z
  .object({
    conversationState: State.optional().openapi({ description: 'caller-written state, included in every webhook payload; null clears it' }),
    metadata: State.optional().openapi({ description: 'the same as conversationState (the name older clients use)' }),
    group_name: z.string().max(100).nullable().optional(),
    groupName: z.string().max(100).nullable().optional(),
  })
  .superRefine((b, ctx) => {
    if (b.conversationState !== undefined && b.metadata !== undefined)
      ctx.addIssue({ code: 'custom', path: ['metadata'], message: 'give conversationState or metadata, not both' });
    const size = JSON.stringify(b.conversationState ?? b.metadata ?? null).length;
    if (size > 16_384) ctx.addIssue({ code: 'custom', path: ['conversationState'], message: 'must be at most 16 KiB of JSON' });
  })
  .openapi('UpdateConversationRequest');

export const SendReactionRequest = z.object({ reaction: z.string().trim().min(1).max(32) }).openapi('SendReactionRequest');
export const SendReactionResponse = z
  .object({ id: z.string(), reaction_type: z.string(), message_id: z.string(), channel: z.string() })
  .openapi('SendReactionResponse');
export const SendTypingResponse = z
  .object({ conversationId: z.string(), channel: z.string(), status: z.string() })
  .openapi('SendTypingResponse');

export const MessagingSettingsBody = z
  .object({
    streakLimit: z.number().int().min(1).max(1000),
    dailyNewConversationLimit: z.number().int().min(0).max(1_000_000),
    dailyOutboundLimit: z.number().int().min(0).max(1_000_000),
    optOutScope: z.enum(['number', 'account']),
    inboundOnlyNumberIds: z.array(z.string().min(1).max(100)).max(1000),
    stopReply: z.string().min(1).max(MAX_BODY),
    helpReply: z.string().min(1).max(MAX_BODY),
    startReply: z.string().min(1).max(MAX_BODY),
  })
  .openapi('MessagingSettings');

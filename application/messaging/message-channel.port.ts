import type { ConversationCommand } from '../../domain/conversation/conversation.decider.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandInput } from '../shared/execute.js';
import type { ConversationView } from './conversation-queries.port.js';

/**
 * The send path's channels (docs/messaging.md#channels). `POST /v1/messages` resolves the line a message goes from,
 * picks one channel, and hands the send to it; every channel (texts, the chat-application channel, the next one) is
 * a `MessageChannel` contributed by its capability's module (`messageChannels`) and listed once by the composition
 * root. A new channel is a new implementation of this port, never a new branch in the send path.
 */

/** The template a send names (the chat-application channel's templates): positional values as an array, named as an object. */
export type TemplateRequest = Readonly<{
  name: string;
  language: string;
  variables: readonly string[] | Readonly<Record<string, string>> | null;
}>;

export type SendInput = Readonly<{
  agentId: string | null;
  numberId: string | null;
  fromNumber: string | null;
  /** one recipient, or `recipients` for a group */
  toNumber: string | null;
  recipients: readonly string[] | null;
  body: string;
  mediaUrls: readonly string[];
  replyToMessageId: string | null;
  sendStyle: string | null;
  /** the channel the caller names (`sms`, `chatapp`, …); null: chosen by the send path */
  channel?: string | null;
  template?: TemplateRequest | null;
  /** set when the request carries an Idempotency-Key: the message id derives from it */
  messageId?: string;
}>;

/** How many media URLs a message carries unless its channel says otherwise (texts: MMS). */
export const MAX_MEDIA_PER_MESSAGE = 10;

export type SendAnswer = Readonly<{
  id: string;
  status: 'accepted';
  channel: string;
  from_number: string;
  to_number: string;
  conversation_id: string;
  media_urls: string[];
  reply_to_message_id: string | null;
  reply_parent_unresolved: boolean | null;
  recipients: string[] | null;
  encoding: 'GSM-7' | 'UCS-2' | null;
  segments: number | null;
}>;

/**
 * The answer for a message accepted for one recipient on a channel without segments (the chat-app and rich
 * channels): what `POST /v1/messages` shows the sender.
 */
export function acceptedForOne(
  input: SendInput & { messageId: string },
  o: Readonly<{ channel: string; from: string; to: string; conversationId: string; replyFound: boolean }>,
): SendAnswer {
  return {
    id: input.messageId,
    status: 'accepted',
    channel: o.channel,
    from_number: o.from,
    to_number: o.to,
    conversation_id: o.conversationId,
    media_urls: [...input.mediaUrls],
    reply_to_message_id: input.replyToMessageId,
    reply_parent_unresolved: input.replyToMessageId ? !o.replyFound : null,
    recipients: null,
    encoding: null,
    segments: null,
  };
}

type RecordOutbound = Extract<ConversationCommand, { type: 'RecordOutbound' }>;

/**
 * The conversation's record of a message for one recipient on a channel without segments (the chat-app and rich
 * channels); `decidedBy` is the channel's rule: the caps of texts (`rules`) or a chat session (`session`).
 */
export function outboundToOne(
  o: Readonly<{
    conversationId: string;
    line: SendingLine;
    to: string;
    input: SendInput & { messageId: string };
    body: string;
    channel: RecordOutbound['data']['channel'] & NonNullable<RecordOutbound['data']['conversationChannel']>;
    replyToMessageId: string | null;
  }>,
  decidedBy: Pick<RecordOutbound['data'], 'rules' | 'session'>,
): CommandInput<RecordOutbound> {
  return {
    type: 'RecordOutbound',
    data: {
      conversationId: o.conversationId,
      messageId: o.input.messageId,
      numberId: o.line.numberId,
      phoneNumber: o.line.phoneNumber,
      agentId: o.line.agentId,
      participant: o.to,
      participants: null,
      groupName: null,
      body: o.body,
      mediaUrls: o.input.mediaUrls,
      channel: o.channel,
      encoding: null,
      segments: null,
      replyToMessageId: o.replyToMessageId,
      sendStyle: o.input.sendStyle,
      kind: 'message',
      conversationChannel: o.channel,
      ...decidedBy,
    } as RecordOutbound['data'],
  };
}

/**
 * What a message goes from: a line. Conversations carry its id as `phoneNumberId`. Most lines are the account's
 * native phone numbers; a channel may add lines of its own (a chat-only number, whose id is its binding's).
 */
export type SendingLine = Readonly<{
  numberId: string;
  phoneNumber: string;
  agentId: string | null;
  /** the native phone number behind the line (null for a channel's own line) */
  native: Readonly<{ country: string }> | null;
  /** the request field the line was named by, for error messages: number_id, from_number or agent_id */
  field: 'number_id' | 'from_number' | 'agent_id';
}>;

/** The part of a conversation's `capabilities` a channel decides (docs/messaging.md#reading). */
export type ChannelCapabilities = Readonly<{
  canSendMessages: boolean;
  sendDisabledReason: string | null;
  media: boolean;
  reactions: boolean;
  emojiReactions: boolean;
}>;

export interface MessageChannel {
  /** the name callers use (`channel` of POST /v1/messages, `sendChannel` of a conversation's capabilities) */
  readonly name: string;
  /** the `channel` of the conversations this channel writes */
  readonly conversationChannel: string;
  /** what `availableChannels` lists while the channel is available on a line (texts list `sms` and `mms`) */
  readonly listedAs: readonly string[];
  /** what `mediaChannels` lists while the channel is available on a line */
  readonly mediaChannels: readonly string[];
  /** whether it sends templates (`template` of POST /v1/messages always goes by a channel that does) */
  readonly sendsTemplates: boolean;

  /**
   * Lines of this channel that are no native number, by id, by E.164, or of an agent (null / [] when none); a channel
   * that sends from native numbers only, which the send path resolves itself, has none of these.
   */
  lineById?(accountId: string, id: string): Promise<SendingLine | null>;
  lineByPhoneNumber?(accountId: string, phoneNumber: string): Promise<SendingLine | null>;
  linesOfAgent?(accountId: string, agentId: string): Promise<SendingLine[]>;

  /** Whether the line can send on this channel now. */
  available(accountId: string, line: SendingLine): Promise<boolean>;

  /** Records the message on its conversation (the acceptance, with this channel's rules) and answers 201's body. */
  send(ctx: RequestContext, line: SendingLine, input: SendInput & { messageId: string }): Promise<SendAnswer>;

  /** What can be done now in a conversation of this channel. */
  capabilities(c: ConversationView, now: string): Promise<ChannelCapabilities>;

  /** the most media URLs one message may carry on it (default MAX_MEDIA_PER_MESSAGE) */
  readonly maxMedia?: number;

  /**
   * Whether this channel, available on the line, claims a send that names no channel and has no earlier conversation
   * with the recipient to follow (the rich channel, when the recipient can receive it); absent: never.
   */
  prefers?(ctx: RequestContext, line: SendingLine, input: SendInput): Promise<boolean>;

  /** Shows a typing indicator in a conversation of this channel (absent: the channel has none, `unsupported`). */
  typing?(ctx: RequestContext, c: ConversationView): Promise<string>;

  /**
   * Facts this channel adds to the capabilities of any conversation on a line where it is available (the chat
   * window's end, for the chat-application channel); {} when none.
   */
  annotate(c: ConversationView, now: string): Promise<Readonly<Record<string, unknown>>>;
}

import { conversationDecider, conversationStream, outboundRefusal } from '../../domain/conversation/conversation.decider.js';
import type { ConversationQueries, ConversationView } from '../messaging/conversation-queries.port.js';
import {
  acceptedForOne,
  type ChannelCapabilities,
  type MessageChannel,
  outboundToOne,
  type SendAnswer,
  type SendInput,
  type SendingLine,
} from '../messaging/message-channel.port.js';
import type { MessagingSettingsService } from '../messaging/messaging-settings.js';
import { invalid } from '../messaging/sms-channel.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { RichCapabilities } from './rich-capabilities.js';
import { RICH_CHANNEL, type RichCommands } from './rich-commands.js';
import { richConversationId } from './rich-transport.js';

/** A carousel: 2 to 20 images and no body (docs/rich-messaging.md#sending). */
export const CAROUSEL_MIN = 2;
export const CAROUSEL_MAX = 20;

/**
 * The rich-messaging channel of the send path (docs/rich-messaging.md#sending), `imessage` in the public API: from a
 * native number the provider serves (a rich line) to one recipient who can receive it, checked live (and cached
 * briefly). A send that names no channel goes by it when the recipient can receive it and by texts otherwise (the
 * fallback); the message and its conversation (`channel` imessage, a conversation of its own) say which carried it.
 * Its messages follow the caps of texts; the delivery pipeline hands them to the provider through RichTransport.
 */
export class RichChannel implements MessageChannel {
  readonly name = RICH_CHANNEL;
  readonly conversationChannel = RICH_CHANNEL;
  readonly listedAs = [RICH_CHANNEL] as const;
  readonly mediaChannels = [RICH_CHANNEL] as const;
  readonly sendsTemplates = false;
  readonly maxMedia = CAROUSEL_MAX;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly conversations: ConversationQueries,
    private readonly settings: MessagingSettingsService,
    private readonly caps: RichCapabilities,
    private readonly commands: () => RichCommands,
  ) {}

  async available(accountId: string, line: SendingLine): Promise<boolean> {
    return line.native !== null && (await this.caps.activeLine(accountId, line.numberId)) !== null;
  }

  /** The fallback rule: claims a one-to-one send whose recipient can receive it; a failed check leaves it to texts. */
  async prefers(ctx: RequestContext, line: SendingLine, input: SendInput): Promise<boolean> {
    if (!input.toNumber || input.recipients) return false;
    const c = await this.caps.check(ctx, line, input.toNumber).catch(() => null);
    return c?.imessage === true;
  }

  async send(ctx: RequestContext, line: SendingLine, input: SendInput & { messageId: string }): Promise<SendAnswer> {
    if (input.recipients) throw invalid('recipients', 'The imessage channel here sends to one recipient: use to_number');
    const to = input.toNumber!;
    if (to === line.phoneNumber) throw invalid('to_number', 'A number cannot message itself');
    if (input.mediaUrls.length >= CAROUSEL_MIN && input.body.trim() !== '')
      throw invalid('body', `A carousel (${CAROUSEL_MIN}-${CAROUSEL_MAX} media_urls) carries no body: leave body empty`);
    const reach = await this.caps.check(ctx, line, to);
    if (!reach.imessage)
      throw invalid(
        'to_number',
        `${to} cannot receive imessage (checked ${reach.checkedAt}); send without channel to fall back to ${reach.sms ? 'sms' : 'another channel'}`,
      );
    const settings = await this.settings.of(ctx.accountId);
    const conversationId = richConversationId(this.ids, ctx.accountId, line.numberId, to);
    const replyTo = input.replyToMessageId ? await this.conversations.message(ctx.accountId, input.replyToMessageId) : null;
    await this.exec.execute(
      conversationDecider,
      conversationStream(conversationId),
      outboundToOne(
        { conversationId, line, to, input, body: input.body, channel: RICH_CHANNEL, replyToMessageId: replyTo ? replyTo.id : null },
        { rules: { streakLimit: settings.streakLimit, inboundOnly: settings.inboundOnlyNumberIds.includes(line.numberId) } },
      ),
      ctx,
      { readYourWrites: true },
    );
    return acceptedForOne(input, { channel: RICH_CHANNEL, from: line.phoneNumber, to, conversationId, replyFound: replyTo !== null });
  }

  /** The caps of texts decide, while the number is still a rich line. */
  async capabilities(c: ConversationView, now: string): Promise<ChannelCapabilities> {
    const caps = { media: true, reactions: true, emojiReactions: true };
    if (!(await this.caps.activeLine(c.accountId, c.phoneNumberId)))
      return { ...caps, canSendMessages: false, sendDisabledReason: `The number ${c.phoneNumber} is no longer on the imessage channel.` };
    const settings = await this.settings.of(c.accountId);
    const { state } = await this.exec.state(conversationDecider, conversationStream(c.id));
    const refusal = outboundRefusal(
      state,
      { streakLimit: settings.streakLimit, inboundOnly: settings.inboundOnlyNumberIds.includes(c.phoneNumberId) },
      now,
    );
    return { ...caps, canSendMessages: refusal === null, sendDisabledReason: refusal ? `${refusal.code}: ${refusal.message}` : null };
  }

  async typing(ctx: RequestContext, c: ConversationView): Promise<string> {
    return this.commands().typing(ctx, c);
  }

  async annotate(): Promise<Record<string, unknown>> {
    return {};
  }
}

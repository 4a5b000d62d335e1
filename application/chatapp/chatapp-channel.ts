import { SESSION_WINDOW_HOURS, type TemplateUse, windowExpiresAt, windowOpen } from '../../domain/chatapp/session-window.js';
import { templateDecider, templateStream } from '../../domain/chatapp/template.decider.js';
import { renderTemplate } from '../../domain/chatapp/template-body.js';
import { conversationDecider, conversationStream } from '../../domain/conversation/conversation.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
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
import type { NumberQueries } from '../numbers/number-queries.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { chatappIds } from './chatapp-ids.js';
import type { ChatappNumberView, ChatappQueries } from './chatapp-queries.port.js';
import type { ChatappSettingsService } from './chatapp-settings.js';

const invalid = (field: string, message: string) =>
  new DomainError('VALIDATION_ERROR', message, [{ field: `body.${field}`, message, type: 'value_error' }]);

/**
 * The chat-application channel of the send path (docs/chatapp.md#sending). It is available on every line with a bound
 * platform number: a chat-only number (its own line) or a dual-channel one (the native number's line). A send is
 * recorded on the line's chat conversation with the recipient, which decides the session rules (the 24-hour window,
 * approved templates and their variables); the delivery pipeline hands it to the platform (ChatappTransport).
 */
export class ChatappChannel implements MessageChannel {
  readonly name = 'chatapp';
  readonly conversationChannel = 'chatapp';
  readonly listedAs = ['chatapp'] as const;
  readonly mediaChannels = ['chatapp'] as const;
  readonly sendsTemplates = true;
  private readonly chatIds: ReturnType<typeof chatappIds>;

  constructor(
    private readonly exec: CommandExecutor,
    ids: IdsPort,
    private readonly queries: ChatappQueries,
    private readonly numbers: NumberQueries,
    private readonly conversations: ConversationQueries,
    private readonly settings: ChatappSettingsService,
  ) {
    this.chatIds = chatappIds(ids);
  }

  private chatOnly(n: ChatappNumberView | null): SendingLine | null {
    if (!n || n.nativeNumberId !== null || n.numberId === null || n.phoneNumber === null) return null;
    return { numberId: n.numberId, phoneNumber: n.phoneNumber, agentId: n.agentId, native: null, field: 'number_id' };
  }

  async lineById(accountId: string, id: string): Promise<SendingLine | null> {
    return this.chatOnly(await this.queries.boundLine(accountId, id));
  }

  async lineByPhoneNumber(accountId: string, phoneNumber: string): Promise<SendingLine | null> {
    return this.chatOnly(await this.queries.boundByPhoneNumber(accountId, phoneNumber));
  }

  /** The agent's chat-only numbers, and its native numbers that are dual-channel. */
  async linesOfAgent(accountId: string, agentId: string): Promise<SendingLine[]> {
    const attached = await this.numbers.attachedTo(accountId, agentId);
    const bound = await this.queries.boundLinesOf(accountId, { lineIds: attached, agentId });
    const out: SendingLine[] = [];
    for (const n of bound) {
      if (n.numberId === null || n.phoneNumber === null) continue;
      if (n.nativeNumberId === null) {
        if (n.agentId === agentId) out.push({ numberId: n.numberId, phoneNumber: n.phoneNumber, agentId, native: null, field: 'agent_id' });
        continue;
      }
      const native = await this.numbers.get(accountId, n.nativeNumberId);
      if (native?.status === 'active')
        out.push({ numberId: native.id, phoneNumber: native.phoneNumber, agentId, native: { country: native.country }, field: 'agent_id' });
    }
    return out;
  }

  async available(accountId: string, line: SendingLine): Promise<boolean> {
    return (await this.queries.boundLine(accountId, line.numberId)) !== null;
  }

  async send(ctx: RequestContext, line: SendingLine, input: SendInput & { messageId: string }): Promise<SendAnswer> {
    if (input.recipients) throw invalid('recipients', 'The chatapp channel sends to one recipient: use to_number');
    if (input.mediaUrls.length > 1)
      throw invalid('media_urls', 'The chatapp channel sends one media file per message (the body is its caption)');
    await this.settings.requireEnabled(ctx.accountId);
    const binding = await this.queries.boundLine(ctx.accountId, line.numberId);
    if (!binding) throw invalid('channel', `The number ${line.phoneNumber} has no bound chat-app number`);
    const to = input.toNumber!;
    if (to === line.phoneNumber) throw invalid('to_number', 'A number cannot message itself');

    let template: TemplateUse | null = null;
    let body = input.body;
    if (input.template) {
      const { name, language, variables } = input.template;
      const { state } = await this.exec.state(
        templateDecider,
        templateStream(this.chatIds.template(ctx.accountId, binding.connectionId, name, language)),
      );
      if (!state.exists)
        throw new DomainError(
          'CHATAPP_TEMPLATE_NOT_FOUND',
          `No template ${name} (${language}) on this number's connection; create it with POST /integrations/chatapp/${binding.connectionId}/templates`,
        );
      template = { name, language, status: state.status, variables: state.content.variables, values: variables };
      body = renderTemplate(state.content.body, variables);
    }
    const replyTo = input.replyToMessageId ? await this.conversations.message(ctx.accountId, input.replyToMessageId) : null;
    const conversationId = this.chatIds.conversation(ctx.accountId, line.numberId, to);
    await this.exec.execute(
      conversationDecider,
      conversationStream(conversationId),
      outboundToOne(
        { conversationId, line, to, input, body, channel: 'chatapp', replyToMessageId: replyTo ? replyTo.id : null },
        { session: { windowHours: SESSION_WINDOW_HOURS, template } },
      ),
      ctx,
      { readYourWrites: true },
    );
    return acceptedForOne(input, { channel: 'chatapp', from: line.phoneNumber, to, conversationId, replyFound: replyTo !== null });
  }

  /** Free-form messages while the window is open; otherwise only templates, which `canSendMessages` does not cover. */
  async capabilities(c: ConversationView, now: string): Promise<ChannelCapabilities> {
    const caps = { media: true, reactions: true, emojiReactions: true };
    if (!(await this.settings.of(c.accountId)).enabled)
      return {
        ...caps,
        canSendMessages: false,
        sendDisabledReason: 'CHATAPP_NOT_ENABLED: the chat-app channel is switched off for this account.',
      };
    if (!(await this.queries.boundLine(c.accountId, c.phoneNumberId)))
      return { ...caps, canSendMessages: false, sendDisabledReason: 'The chat-app number of this conversation is no longer bound.' };
    const last = await this.queries.lastInboundAt(c.accountId, c.phoneNumberId, c.participant);
    if (windowOpen(last, now)) return { ...caps, canSendMessages: true, sendDisabledReason: null };
    return {
      ...caps,
      canSendMessages: false,
      sendDisabledReason:
        last === null
          ? '131047: the recipient has not written yet, so only an approved template can be sent.'
          : `131047: the 24-hour window closed at ${windowExpiresAt(last)}; only an approved template can be sent until the recipient writes again.`,
    };
  }

  /** The end of the participant's chat window on the line, on any conversation of a line the channel is on. */
  async annotate(c: ConversationView): Promise<Record<string, unknown>> {
    if (c.isGroup) return {};
    return { chatappWindowExpiresAt: windowExpiresAt(await this.queries.lastInboundAt(c.accountId, c.phoneNumberId, c.participant)) };
  }
}

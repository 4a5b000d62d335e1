import { agentDecider, agentStream } from '../../domain/agent/agent.decider.js';
import { conversationDecider, conversationStream } from '../../domain/conversation/conversation.decider.js';
import { messageDecider, messageStream } from '../../domain/message/message.decider.js';
import { untextableNumber } from '../../domain/message/textable.js';
import { type PhoneNumberState, phoneNumberDecider, phoneNumberStream } from '../../domain/phone-number/phone-number.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { NumberQueries } from '../numbers/number-queries.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { ConversationQueries, ConversationView } from './conversation-queries.port.js';
import { MAX_MEDIA_PER_MESSAGE, type MessageChannel, type SendAnswer, type SendInput, type SendingLine } from './message-channel.port.js';
import type { MessageChannels } from './message-channels.js';
import { invalid } from './sms-channel.js';

export type { SendAnswer, SendInput } from './message-channel.port.js';
export { participantKey } from './sms-channel.js';

/**
 * Sending and the conversation-level writes (docs/messaging.md#sending). A send resolves the line it goes from
 * (`number_id`, else `from_number`, else the agent's line), picks its channel (docs/messaging.md#channels), and
 * hands the send to that channel, which records it on its conversation under its own rules. The delivery follows
 * in the channel's own process manager.
 */
export class MessageCommands {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly numbers: NumberQueries,
    private readonly conversations: ConversationQueries,
    private readonly channels: MessageChannels,
  ) {}

  async send(ctx: RequestContext, input: SendInput): Promise<SendAnswer> {
    const line = await this.sendingLine(ctx, input);
    const channel = await this.channelFor(ctx, line, input);
    const maxMedia = channel.maxMedia ?? MAX_MEDIA_PER_MESSAGE;
    if (input.mediaUrls.length > maxMedia)
      throw invalid('media_urls', `The ${channel.name} channel carries at most ${maxMedia} media URLs in one message`);
    return channel.send(ctx, line, { ...input, messageId: input.messageId ?? this.ids.id('msg') });
  }

  /**
   * The channel a send uses (docs/messaging.md#channels): the one named by `channel`; for a `template`, the line's
   * channel that sends templates; else the channel of the recipient's most recent conversation on the line; else a
   * channel that claims the recipient (the rich channel when they can receive it); else the first channel available
   * on it (texts before the others).
   */
  private async channelFor(ctx: RequestContext, line: SendingLine, input: SendInput): Promise<MessageChannel> {
    const available = await this.channels.availableOn(ctx.accountId, line);
    const names = () => available.map((c) => c.name).join(', ') || 'no channel';
    if (input.channel) {
      const named = available.find((c) => c.name === input.channel);
      if (!named) throw invalid('channel', `The number ${line.phoneNumber} does not send by ${input.channel}; it sends by ${names()}`);
      if (input.template && !named.sendsTemplates) throw invalid('template', `The ${named.name} channel sends no templates`);
      return named;
    }
    if (input.template) {
      const t = available.find((c) => c.sendsTemplates);
      if (!t) throw invalid('template', `The number ${line.phoneNumber} has no channel that sends templates (it sends by ${names()})`);
      return t;
    }
    if (available.length === 0) throw invalid(line.field, 'The number is not active: it cannot send messages');
    if (available.length === 1 || !input.toNumber) return available[0]!;
    const latest = await this.conversations.latestChannel(ctx.accountId, line.numberId, input.toNumber);
    const following = available.find((c) => c.conversationChannel === latest);
    if (following) return following;
    for (const c of available) if (c.prefers && (await c.prefers(ctx, line, input))) return c;
    return available[0]!;
  }

  /**
   * The line a send goes from: `number_id`, else `from_number`, else the agent's. A native number must be the
   * account's, active, and the agent's when an agent is named; a channel's own line (a chat-only number) the same.
   * With only an agent, the line is its first number, unless the recipient's most recent conversation is on one of
   * the agent's channel lines.
   */
  private async sendingLine(ctx: RequestContext, input: SendInput): Promise<SendingLine> {
    const agentId = input.agentId;
    if (agentId) {
      const { state } = await this.exec.state(agentDecider, agentStream(agentId));
      if (state.status !== 'active' || state.accountId !== ctx.accountId) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
    }
    const own = (l: SendingLine | null, field: SendingLine['field']) => {
      if (!l) return null;
      if (agentId && l.agentId !== agentId) throw invalid(field, 'The number does not belong to the agent');
      return { ...l, field };
    };
    if (input.numberId) {
      const { state: n } = await this.exec.state(phoneNumberDecider, phoneNumberStream(input.numberId));
      if (n.status === 'none' || n.accountId !== ctx.accountId) {
        const line = own(await this.channels.lineById(ctx.accountId, input.numberId), 'number_id');
        if (line) return line;
        throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
      }
      return nativeLine(n, 'number_id', agentId);
    }
    if (input.fromNumber) {
      const found = await this.numbers.activeByPhoneNumber(input.fromNumber);
      if (!found || found.accountId !== ctx.accountId) {
        const line = own(await this.channels.lineByPhoneNumber(ctx.accountId, input.fromNumber), 'from_number');
        if (line) return line;
        const problem = untextableNumber(input.fromNumber);
        if (problem)
          throw new DomainError('VALIDATION_ERROR', `body.from_number: ${problem}`, [
            { field: 'from_number', message: problem, type: 'value_error' },
          ]);
        throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
      }
      return this.nativeById(ctx, found.id, 'from_number', agentId);
    }
    if (!agentId) throw invalid('agent_id', 'Name the agent (agent_id) or the number to send from (number_id or from_number)');
    const first = (await this.numbers.attachedTo(ctx.accountId, agentId))[0] ?? null;
    const extra = (await this.channels.linesOfAgent(ctx.accountId, agentId)).filter((l) => l.numberId !== first);
    if (extra.length > 0 && input.toNumber) {
      const candidates = [...(first ? [first] : []), ...extra.map((l) => l.numberId)];
      const latest = await this.conversations.latestLine(ctx.accountId, candidates, input.toNumber);
      const picked = extra.find((l) => l.numberId === latest);
      if (picked) return picked.native ? this.nativeById(ctx, picked.numberId, 'agent_id', agentId) : { ...picked, field: 'agent_id' };
    }
    if (first) return this.nativeById(ctx, first, 'agent_id', agentId);
    if (extra[0])
      return extra[0].native ? this.nativeById(ctx, extra[0].numberId, 'agent_id', agentId) : { ...extra[0], field: 'agent_id' };
    throw invalid('agent_id', 'The agent has no phone number to send from');
  }

  private async nativeById(ctx: RequestContext, numberId: string, field: SendingLine['field'], agentId: string | null) {
    const { state: n } = await this.exec.state(phoneNumberDecider, phoneNumberStream(numberId));
    if (n.status === 'none' || n.accountId !== ctx.accountId) throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
    return nativeLine(n, field, agentId);
  }

  /** POST /v1/messages/{id}/reactions: a reaction from the number that holds the conversation. */
  async react(ctx: RequestContext, messageId: string, reactionType: string) {
    const m = await this.conversations.message(ctx.accountId, messageId);
    if (!m) throw new DomainError('MESSAGE_NOT_FOUND', 'Message not found');
    const fromNumber = m.direction === 'inbound' ? m.toNumber : m.fromNumber;
    const reactionId = this.ids.id('rxn');
    await this.exec.execute(
      messageDecider,
      messageStream(messageId),
      { type: 'React', data: { messageId, reactionId, reactionType, direction: 'outbound', fromNumber } },
      ctx,
      { readYourWrites: true },
    );
    return { id: reactionId, reaction_type: reactionType, message_id: messageId, channel: m.channel ?? 'sms' };
  }

  /** PATCH /v1/conversations/{id}: the caller-written conversation state and a group's name. */
  async update(
    ctx: RequestContext,
    conversationId: string,
    changes: { state?: Record<string, unknown> | null; groupName?: string | null },
  ) {
    await this.requireConversation(ctx, conversationId);
    await this.exec.execute(
      conversationDecider,
      conversationStream(conversationId),
      { type: 'SetConversationState', data: { conversationId, ...changes } },
      ctx,
      { readYourWrites: true },
    );
  }

  async requireConversation(ctx: RequestContext, conversationId: string): Promise<ConversationView> {
    const c = await this.conversations.get(ctx.accountId, conversationId);
    if (!c) throw new DomainError('CONVERSATION_NOT_FOUND', 'Conversation not found');
    return c;
  }
}

/** A native number as a line: active, not being released, and the named agent's. */
function nativeLine(n: Exclude<PhoneNumberState, { status: 'none' }>, field: SendingLine['field'], agentId: string | null): SendingLine {
  if (n.status !== 'active' || n.releasing) throw invalid(field, 'The number is not active: it cannot send messages');
  if (agentId && n.agentId !== agentId) throw invalid(field, 'The number does not belong to the agent');
  return { numberId: n.numberId, phoneNumber: n.phoneNumber, agentId: n.agentId, native: { country: n.country }, field };
}

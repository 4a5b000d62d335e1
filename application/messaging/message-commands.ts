import { agentDecider } from '../../domain/agent/agent.decider.js';
import { conversationDecider, outboundRefusal } from '../../domain/conversation/conversation.decider.js';
import { dailyCounterDecider } from '../../domain/conversation/daily-counter.decider.js';
import { utcDay } from '../../domain/conversation/rules.js';
import { segmentsOf } from '../../domain/message/encoding.js';
import { messageDecider } from '../../domain/message/message.decider.js';
import { phoneNumberDecider } from '../../domain/phone-number/phone-number.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import { streams } from '../../domain/shared/streams.js';
import type { NumberQueries } from '../numbers/number-queries.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { KeyedLock } from '../shared/keyed-lock.js';
import type { ConversationQueries, ConversationView } from './conversation-queries.port.js';
import type { MessagingSettingsService } from './messaging-settings.js';
import type { SendRateLimiter } from './send-rate.js';

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
  /** set when the request carries an Idempotency-Key: the message id derives from it */
  messageId?: string;
}>;

export type SendAnswer = Readonly<{
  id: string;
  status: 'accepted';
  channel: 'sms' | 'mms';
  from_number: string;
  to_number: string;
  conversation_id: string;
  media_urls: string[];
  reply_to_message_id: string | null;
  reply_parent_unresolved: boolean | null;
  recipients: string[] | null;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
}>;

const invalid = (field: string, message: string) =>
  new DomainError('VALIDATION_ERROR', message, [{ field: `body.${field}`, message, type: 'value_error' }]);

/** A one-to-one conversation is keyed by the participant; a group by its sorted members (docs/messaging.md#groups). */
export function participantKey(members: readonly string[]): string {
  return [...new Set(members)].sort().join(',');
}

/**
 * Sending and the conversation-level writes (docs/messaging.md#sending). A send is accepted when its
 * conversation records it; the carrier submission happens afterwards in the MessageSender process manager.
 * Order of checks: the caller's number and agent, the number's send rate, the daily counters (only for sends
 * that count), then the conversation's own caps; a daily count whose send its conversation refuses is given back.
 */
export class MessageCommands {
  private readonly lock = new KeyedLock();

  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly numbers: NumberQueries,
    private readonly conversations: ConversationQueries,
    private readonly settings: MessagingSettingsService,
    private readonly rate: SendRateLimiter,
  ) {}

  conversationIdOf(accountId: string, numberId: string, participant: string): string {
    return this.ids.derived('conv', accountId, numberId, participant);
  }

  async send(ctx: RequestContext, input: SendInput): Promise<SendAnswer> {
    const number = await this.sendingNumber(ctx, input);
    const members = input.recipients ? [...new Set(input.recipients)].filter((m) => m !== number.phoneNumber) : null;
    if (members && members.length === 0) throw invalid('recipients', 'A group needs at least one recipient besides the sending number');
    if (!members && input.toNumber === number.phoneNumber) throw invalid('to_number', 'A number cannot text itself');
    const participant = members ? (members.length === 1 ? members[0]! : participantKey(members)) : input.toNumber!;
    const participants = members && members.length > 1 ? [...members].sort() : null;
    const conversationId = this.conversationIdOf(ctx.accountId, number.numberId, participant);
    const messageId = input.messageId ?? this.ids.id('msg');

    this.rate.take(number.numberId);
    const settings = await this.settings.of(ctx.accountId);
    const rules = { streakLimit: settings.streakLimit, inboundOnly: settings.inboundOnlyNumberIds.includes(number.numberId) };
    const measured = segmentsOf(input.body);
    const replyTo = input.replyToMessageId ? await this.conversations.message(ctx.accountId, input.replyToMessageId) : null;
    const command = {
      type: 'RecordOutbound' as const,
      data: {
        conversationId,
        messageId,
        numberId: number.numberId,
        phoneNumber: number.phoneNumber,
        agentId: number.agentId,
        participant,
        participants,
        groupName: null,
        body: input.body,
        mediaUrls: input.mediaUrls,
        channel: input.mediaUrls.length > 0 ? ('mms' as const) : ('sms' as const),
        encoding: measured.encoding,
        segments: measured.segments,
        replyToMessageId: replyTo ? replyTo.id : null,
        sendStyle: input.sendStyle,
        kind: 'message' as const,
        rules,
      },
    };

    await this.lock.run(conversationId, async () => {
      // the daily counters see only sends to someone who never wrote to this number (a new conversation included)
      const stream = streams.conversation(conversationId);
      const { state: before } = await this.exec.load(conversationDecider, stream);
      const alreadyRecorded = before.exists && before.recentMessageIds.includes(messageId);
      const counts = !alreadyRecorded && (!before.exists || before.inboundCount === 0);
      const day = utcDay(this.exec.now());
      const dayRef = { numberId: number.numberId, day, participant };
      if (counts) {
        // the conversation's own caps first: a send they refuse uses no daily slot
        const refusal = outboundRefusal(before, rules, this.exec.now());
        if (refusal) throw refusal;
        await this.exec.execute(
          dailyCounterDecider,
          streams.numberDay(number.numberId, day),
          {
            type: 'CountSend',
            data: {
              ...dayRef,
              newConversation: !before.exists,
              limits: { newConversations: settings.dailyNewConversationLimit, outbound: settings.dailyOutboundLimit },
            },
          },
          ctx,
        );
      }
      try {
        await this.exec.execute(conversationDecider, stream, command, ctx, { readYourWrites: true });
      } catch (err) {
        // another process won the race and the conversation refused: give the slot back if nothing was sent to them
        if (counts && err instanceof DomainError && !(await this.exec.load(conversationDecider, stream)).state.exists)
          await this.exec
            .execute(dailyCounterDecider, streams.numberDay(number.numberId, day), { type: 'ReleaseCount', data: dayRef }, ctx)
            .catch(() => undefined);
        throw err;
      }
    });
    return {
      id: messageId,
      status: 'accepted',
      channel: command.data.channel,
      from_number: number.phoneNumber,
      to_number: participant,
      conversation_id: conversationId,
      media_urls: [...input.mediaUrls],
      reply_to_message_id: input.replyToMessageId,
      reply_parent_unresolved: input.replyToMessageId ? replyTo === null : null,
      recipients: members ? [...members] : null,
      encoding: measured.encoding,
      segments: measured.segments,
    };
  }

  /**
   * The number a send goes from: `number_id`, else `from_number`, else the agent's first number. It must be
   * the account's, active, and the agent's when an agent is named.
   */
  private async sendingNumber(ctx: RequestContext, input: SendInput) {
    let agentId = input.agentId;
    if (agentId) {
      const { state } = await this.exec.load(agentDecider, streams.agent(agentId));
      if (state.status !== 'active' || state.accountId !== ctx.accountId) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
    }
    let numberId = input.numberId;
    let field = 'number_id';
    if (!numberId && input.fromNumber) {
      field = 'from_number';
      const found = await this.numbers.activeByPhoneNumber(input.fromNumber);
      if (!found || found.accountId !== ctx.accountId) throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
      numberId = found.id;
    }
    if (!numberId) {
      if (!agentId) throw invalid('agent_id', 'Name the agent (agent_id) or the number to send from (number_id or from_number)');
      field = 'agent_id';
      numberId = (await this.numbers.attachedTo(ctx.accountId, agentId))[0] ?? null;
      if (!numberId) throw invalid('agent_id', 'The agent has no phone number to send from');
    }
    const { state: n } = await this.exec.load(phoneNumberDecider, streams.phoneNumber(numberId));
    if (n.status === 'none' || n.accountId !== ctx.accountId) throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
    if (n.status !== 'active' || n.releasing) throw invalid(field, 'The number is not active: it cannot send messages');
    if (agentId && n.agentId !== agentId) throw invalid(field, 'The number does not belong to the agent');
    agentId = n.agentId;
    return { numberId, phoneNumber: n.phoneNumber, agentId, country: n.country };
  }

  /** POST /v1/messages/{id}/reactions: a reaction from the number that holds the conversation. */
  async react(ctx: RequestContext, messageId: string, reactionType: string) {
    const m = await this.conversations.message(ctx.accountId, messageId);
    if (!m) throw new DomainError('MESSAGE_NOT_FOUND', 'Message not found');
    const fromNumber = m.direction === 'inbound' ? m.toNumber : m.fromNumber;
    const reactionId = this.ids.id('rxn');
    await this.exec.execute(
      messageDecider,
      streams.message(messageId),
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
      streams.conversation(conversationId),
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

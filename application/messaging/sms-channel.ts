import { conversationDecider, conversationStream, outboundRefusal } from '../../domain/conversation/conversation.decider.js';
import { dailyCounterDecider, numberDayStream } from '../../domain/conversation/daily-counter.decider.js';
import type { MessagingSettings } from '../../domain/conversation/rules.js';
import { utcDay } from '../../domain/conversation/rules.js';
import { segmentsOf } from '../../domain/message/encoding.js';
import { untextableNumber } from '../../domain/message/textable.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { RequestContext } from '../shared/context.js';
import { type CommandExecutor, step } from '../shared/execute.js';
import { KeyedLock } from '../shared/keyed-lock.js';
import type { ConversationQueries, ConversationView } from './conversation-queries.port.js';
import type { ChannelCapabilities, MessageChannel, SendAnswer, SendInput, SendingLine } from './message-channel.port.js';
import type { MessagingSettingsService } from './messaging-settings.js';
import type { SendRateLimiter } from './send-rate.js';

export const invalid = (field: string, message: string) =>
  new DomainError('VALIDATION_ERROR', message, [{ field: `body.${field}`, message, type: 'value_error' }]);

/** A one-to-one conversation is keyed by the participant; a group by its sorted members (docs/messaging.md#groups). */
export function participantKey(members: readonly string[]): string {
  return [...new Set(members)].sort().join(',');
}

/** A text conversation's id: one per account, number and participant, so every writer meets on one stream. */
export const textConversationId = (ids: IdsPort, accountId: string, numberId: string, participant: string): string =>
  ids.derived('conv', accountId, numberId, participant);

/**
 * Texts, SMS and MMS (docs/messaging.md#sending): the channel of the account's native numbers. A send is accepted
 * when its conversation records it; the delivery pipeline then hands it to the carrier (SmsTransport). Order of
 * checks: the recipients are US or Canadian numbers, the number's send rate, the conversation's own caps, the daily
 * counters (only for sends that count), then the record; a daily count whose send its conversation refuses is
 * given back.
 */
export class SmsChannel implements MessageChannel {
  readonly name = 'sms';
  readonly conversationChannel = 'native';
  readonly listedAs = ['sms', 'mms'] as const;
  readonly mediaChannels = ['mms'] as const;
  readonly sendsTemplates = false;
  private readonly lock = new KeyedLock();

  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly conversations: ConversationQueries,
    private readonly settings: MessagingSettingsService,
    private readonly rate: SendRateLimiter,
  ) {}

  async available(_accountId: string, line: SendingLine): Promise<boolean> {
    return line.native !== null;
  }

  async send(ctx: RequestContext, number: SendingLine, input: SendInput & { messageId: string }): Promise<SendAnswer> {
    // A one-to-one text may go to any E.164 number: the carrier decides, and a number it cannot reach fails with
    // its reason ("…isn't valid or is disabled", "…destination country isn't enabled"). A group's members are US
    // and Canadian numbers, refused here (docs/messaging.md#sending).
    for (const [field, n] of (input.recipients ?? []).map((r, i) => [`recipients.${i}`, r] as const)) {
      const problem = untextableNumber(n);
      if (problem)
        throw new DomainError('VALIDATION_ERROR', `body.${field}: ${problem}`, [{ field, message: problem, type: 'value_error' }]);
    }
    const members = input.recipients ? [...new Set(input.recipients)].filter((m) => m !== number.phoneNumber) : null;
    if (members && members.length === 0) throw invalid('recipients', 'A group needs at least one recipient besides the sending number');
    if (!members && input.toNumber === number.phoneNumber) throw invalid('to_number', 'A number cannot text itself');
    const participant = members ? (members.length === 1 ? members[0]! : participantKey(members)) : input.toNumber!;
    const participants = members && members.length > 1 ? [...members].sort() : null;
    const conversationId = textConversationId(this.ids, ctx.accountId, number.numberId, participant);
    const messageId = input.messageId;

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
      const stream = conversationStream(conversationId);
      const { state: before } = await this.exec.state(conversationDecider, stream);
      const alreadyRecorded = before.exists && before.recentMessageIds.includes(messageId);
      const counts = !alreadyRecorded && (!before.exists || before.inboundCount === 0);
      const day = utcDay(this.exec.now());
      const dayRef = { numberId: number.numberId, day, participant };
      if (!counts) {
        await this.exec.execute(conversationDecider, stream, command, ctx, { readYourWrites: true });
        return;
      }
      // the conversation's own caps first: a send they refuse uses no daily slot
      const refusal = outboundRefusal(before, rules, this.exec.now());
      if (refusal) throw refusal;
      const count = step(
        dailyCounterDecider,
        numberDayStream(number.numberId, day),
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
      // the slot and the send are written together (docs/event-store.md#commands-written-together); where another
      // process won the race and the conversation refused after the slot was taken, the slot goes back if nothing
      // was sent to the recipient
      const record = step(conversationDecider, stream, command, ctx, { readYourWrites: true });
      await this.exec.executeTogether([count, record], async (err) => {
        if (err instanceof DomainError && !(await this.exec.state(conversationDecider, stream)).state.exists)
          await this.exec
            .execute(dailyCounterDecider, numberDayStream(number.numberId, day), { type: 'ReleaseCount', data: dayRef }, ctx)
            .catch(() => undefined);
      });
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

  /** A cap or an opt-out that blocks sending says so (docs/messaging.md#caps); the daily caps belong to the number. */
  async capabilities(c: ConversationView, now: string): Promise<ChannelCapabilities> {
    const [settings, optOuts] = await Promise.all([this.settings.of(c.accountId), this.conversations.optOuts(c.accountId, c.participant)]);
    const optedOut = optOuts.find((o) => o.numberId === null || o.numberId === c.phoneNumberId);
    const reason = optedOut
      ? `The recipient opted out (${optedOut.keyword}) at ${optedOut.at}; sends are accepted and then fail until they text START.`
      : capRefusal(c, settings, now);
    return { canSendMessages: reason === null, sendDisabledReason: reason, media: true, reactions: true, emojiReactions: true };
  }

  async annotate(): Promise<Record<string, unknown>> {
    return {};
  }
}

function capRefusal(c: ConversationView, settings: MessagingSettings, now: string): string | null {
  const state = {
    exists: true as const,
    conversationId: c.id,
    accountId: c.accountId,
    numberId: c.phoneNumberId,
    participant: c.participant,
    channel: 'native' as const,
    isGroup: c.isGroup,
    groupName: c.groupName,
    createdAt: c.createdAt,
    lastMessageAt: c.lastMessageAt,
    messageCount: c.messageCount,
    inboundCount: c.inboundCount,
    lastInboundAt: null,
    outboundSinceReply: c.outboundSinceReply,
    reengagementLocked: c.reengagementLocked,
    conversationState: c.conversationState,
    recentMessageIds: [],
  };
  const refusal = outboundRefusal(
    state,
    { streakLimit: settings.streakLimit, inboundOnly: settings.inboundOnlyNumberIds.includes(c.phoneNumberId) },
    now,
  );
  return refusal ? `${refusal.code}: ${refusal.message}` : null;
}

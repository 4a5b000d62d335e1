import { consentDecider } from '../../domain/conversation/consent.decider.js';
import { conversationDecider } from '../../domain/conversation/conversation.decider.js';
import { consentKeywordOf } from '../../domain/conversation/rules.js';
import { segmentsOf } from '../../domain/message/encoding.js';
import { messageDecider } from '../../domain/message/message.decider.js';
import { streams } from '../../domain/shared/streams.js';
import type { NumberQueries } from '../numbers/number-queries.port.js';
import type { EventStorePort } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { ConversationQueries } from './conversation-queries.port.js';
import { failureOf } from './failures.js';
import { participantKey } from './message-commands.js';
import type { MessagingSettingsService } from './messaging-settings.js';
import type { InboundSms, SmsCarrierEventsPort, SmsReceipt } from './sms-carrier.port.js';

export const CARRIER_ACTOR = 'system:carrier';

/**
 * What the carrier reports, recorded (docs/messaging.md#receiving): inbound texts, media and group messages
 * (on the conversation, then consent keywords and their automatic answers), inbound reactions, and receipts.
 * Every step derives its ids from the carrier's, so a callback delivered twice records everything once, and a
 * callback cut short by a crash completes when the carrier delivers it again.
 */
export class CarrierEventsHandler implements SmsCarrierEventsPort {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly numbers: NumberQueries,
    private readonly conversations: ConversationQueries,
    private readonly settings: MessagingSettingsService,
    private readonly readModels: ReadModelsPort,
    private readonly store: EventStorePort,
    private readonly log: LoggerPort,
  ) {}

  private ctx(accountId: string, correlationId: string): RequestContext {
    return { accountId, requestId: null, correlationId, actor: CARRIER_ACTOR };
  }

  async inbound(m: InboundSms): Promise<{ messageId: string } | null> {
    const number = await this.numbers.activeByPhoneNumber(m.to);
    if (!number) {
      // a released or unknown number: the text belongs to no account here
      this.log.warn({ to: m.to, carrierMessageId: m.carrierMessageId }, 'inbound text for a number that is not active here: dropped');
      return null;
    }
    const ctx = this.ctx(number.accountId, m.carrierMessageId);
    if (m.reaction) return this.inboundReaction(m, number.accountId, ctx);

    const messageId = this.ids.derived('msg', 'inbound', m.carrierMessageId);
    const others = m.group ? [...new Set(m.group.participants)].filter((p) => p !== number.phoneNumber) : null;
    const isGroup = others !== null && others.length > 1;
    const participant = isGroup ? participantKey(others) : m.from;
    const conversationId = this.ids.derived('conv', number.accountId, number.id, participant);
    const keyword = isGroup ? null : consentKeywordOf(m.body);
    const measured = segmentsOf(m.body);
    await this.exec.execute(
      conversationDecider,
      streams.conversation(conversationId),
      {
        type: 'RecordInbound',
        data: {
          conversationId,
          messageId,
          numberId: number.id,
          phoneNumber: number.phoneNumber,
          agentId: number.agentId,
          participant,
          participants: isGroup ? [...others].sort() : null,
          groupName: m.group?.name ?? null,
          from: m.from,
          body: m.body,
          mediaUrls: m.mediaUrls,
          channel: m.mediaUrls.length > 0 ? 'mms' : 'sms',
          encoding: measured.encoding,
          segments: measured.segments,
          carrierMessageId: m.carrierMessageId,
          receivedAt: m.receivedAt,
          keyword,
        },
      },
      ctx,
    );
    if (keyword)
      await this.honourKeyword(ctx, { kind: keyword.kind, keyword: keyword.keyword, messageId, conversationId, number, from: m.from });
    return { messageId };
  }

  /** STOP/START change consent; each keyword gets its configured answer (docs/messaging.md#opt-out). */
  private async honourKeyword(
    ctx: RequestContext,
    k: {
      kind: 'stop' | 'start' | 'help';
      keyword: string;
      messageId: string;
      conversationId: string;
      number: { id: string; phoneNumber: string; agentId: string | null };
      from: string;
    },
  ): Promise<void> {
    const settings = await this.settings.of(ctx.accountId);
    const scope = settings.optOutScope === 'account' ? null : k.number.id;
    if (k.kind !== 'help')
      await this.exec.execute(
        consentDecider,
        streams.consent(ctx.accountId, k.from),
        {
          type: k.kind === 'stop' ? 'OptOut' : 'OptIn',
          data: { recipient: k.from, numberId: scope, keyword: k.keyword, messageId: k.messageId },
        },
        { ...ctx, causationId: null },
      );
    const body = k.kind === 'stop' ? settings.stopReply : k.kind === 'start' ? settings.startReply : settings.helpReply;
    const measured = segmentsOf(body);
    await this.exec.execute(
      conversationDecider,
      streams.conversation(k.conversationId),
      {
        type: 'RecordOutbound',
        data: {
          conversationId: k.conversationId,
          messageId: this.ids.derived('msg', 'auto-reply', k.messageId),
          numberId: k.number.id,
          phoneNumber: k.number.phoneNumber,
          agentId: k.number.agentId,
          participant: k.from,
          participants: null,
          groupName: null,
          body,
          mediaUrls: [],
          channel: 'sms',
          encoding: measured.encoding,
          segments: measured.segments,
          replyToMessageId: k.messageId,
          sendStyle: null,
          kind: 'auto_reply',
          rules: { streakLimit: settings.streakLimit, inboundOnly: false },
        },
      },
      ctx,
    );
  }

  private async inboundReaction(m: InboundSms, accountId: string, ctx: RequestContext): Promise<{ messageId: string } | null> {
    const r = m.reaction!;
    const target =
      (await this.conversations.message(accountId, r.targetMessageId)) ??
      (await this.byCarrierId(r.targetMessageId).then((x) => (x && x.accountId === accountId ? { id: x.messageId } : null)));
    if (!target) {
      this.log.warn({ carrierMessageId: m.carrierMessageId, target: r.targetMessageId }, 'inbound reaction to an unknown message: dropped');
      return null;
    }
    const reactionId = this.ids.derived('rxn', 'inbound', m.carrierMessageId);
    await this.exec.execute(
      messageDecider,
      streams.message(target.id),
      { type: 'React', data: { messageId: target.id, reactionId, reactionType: r.reactionType, direction: 'inbound', fromNumber: m.from } },
      ctx,
    );
    return { messageId: reactionId };
  }

  async receipt(r: SmsReceipt): Promise<void> {
    const found = await this.byCarrierId(r.carrierMessageId);
    if (!found) throw new Error(`no message with carrier id ${r.carrierMessageId} yet`);
    const failure = r.status === 'failed' ? failureOf(r.failureReason ?? '', r.errorCode) : null;
    await this.exec.execute(
      messageDecider,
      streams.message(found.messageId),
      {
        type: 'RecordReceipt',
        data: {
          messageId: found.messageId,
          receiptId: r.receiptId,
          carrierMessageId: r.carrierMessageId,
          status: r.status,
          at: r.at,
          failure,
        },
      },
      this.ctx(found.accountId, r.carrierMessageId),
    );
  }

  /**
   * The message a carrier id belongs to. A receipt can overtake the projection of the submission it is about:
   * then wait for the read models to reach the log's head once before giving up (the carrier delivers again).
   */
  private async byCarrierId(carrierMessageId: string) {
    const found = await this.conversations.messageIdByCarrierId(carrierMessageId);
    if (found) return found;
    await this.readModels.waitFor(await this.store.headCheckpoint(), ['MessageSubmitted']);
    return this.conversations.messageIdByCarrierId(carrierMessageId);
  }
}

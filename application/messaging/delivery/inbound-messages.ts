import { consentDecider, consentStream } from '../../../domain/conversation/consent.decider.js';
import { conversationDecider, conversationStream } from '../../../domain/conversation/conversation.decider.js';
import { type ConsentKeyword, consentKeywordOf } from '../../../domain/conversation/rules.js';
import { messageDecider, messageStream } from '../../../domain/message/message.decider.js';
import type { IdsPort } from '../../ports/ids.port.js';
import type { LoggerPort } from '../../ports/logger.port.js';
import type { ReadModelsPort } from '../../ports/read-models.port.js';
import type { RequestContext } from '../../shared/context.js';
import type { CommandExecutor } from '../../shared/execute.js';
import type { ConversationQueries } from '../conversation-queries.port.js';
import type { MessagingSettingsService } from '../messaging-settings.js';
import { participantKey } from '../sms-channel.js';
import type { MessageTransports } from './message-transports.js';
import type { DeliveryReceipt, InboundLine, InboundMessage, MessageTransport, MessagingInboundPort } from './transport.port.js';

/** How long a report may wait for the record of the send it is about (docs/messaging.md#receipts). */
const OVERTAKEN_REPORT_WAIT_MS = 3000;

/**
 * What every provider reports, recorded by one handler (docs/messaging.md#receiving), whatever the channel: a message
 * someone sent to one of the platform's lines (on the conversation, then, on texts, the consent keywords and their
 * automatic answers), a reaction to an earlier message, and receipts of the messages sent. The channel's transport says
 * which line a report is for and how its ids derive; every id derives from the provider's, so a report delivered twice
 * records everything once, and one cut short by a crash completes when the provider delivers it again. A message is
 * found by its channel and the provider's id of it.
 */
export class InboundMessages implements MessagingInboundPort {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly transports: MessageTransports,
    private readonly conversations: ConversationQueries,
    private readonly settings: MessagingSettingsService,
    private readonly readModels: ReadModelsPort,
    private readonly log: LoggerPort,
  ) {}

  private transport(channel: string): MessageTransport {
    const t = this.transports.of(channel);
    if (!t) throw new Error(`no transport reports under the channel ${channel}`);
    return t;
  }

  private ctx(t: MessageTransport, accountId: string, correlationId: string): RequestContext {
    return { accountId, requestId: null, correlationId, actor: t.actor };
  }

  async message(m: InboundMessage, o: { readYourWrites?: boolean } = {}): Promise<{ messageId: string } | null> {
    const t = this.transport(m.channel);
    const line = await t.line(m.to);
    if (!line) return null; // no line of this channel here (the transport says why in the log)
    const ctx = this.ctx(t, line.accountId, m.providerMessageId);
    if (m.reaction) return this.reaction(t, m, m.reaction, line.accountId, ctx);

    const messageId = t.inboundMessageId(m.providerMessageId);
    const others = m.group ? [...new Set(m.group.participants)].filter((p) => p !== line.phoneNumber) : null;
    const isGroup = others !== null && others.length > 1;
    const participant = isGroup ? participantKey(others) : m.from;
    const conversationId = t.conversationId(line, participant);
    const keyword = t.texts?.readsKeywords && !isGroup ? consentKeywordOf(m.body) : null;
    const measured = t.texts?.measure(m.body) ?? null;
    await this.exec.execute(
      conversationDecider,
      conversationStream(conversationId),
      {
        type: 'RecordInbound',
        data: {
          conversationId,
          messageId,
          numberId: line.numberId,
          phoneNumber: line.phoneNumber,
          agentId: line.agentId,
          participant,
          participants: isGroup ? [...others].sort() : null,
          groupName: m.group?.name ?? null,
          from: m.from,
          body: m.body,
          mediaUrls: m.mediaUrls,
          channel: t.inboundChannel(m.mediaUrls),
          encoding: measured?.encoding ?? null,
          segments: measured?.segments ?? null,
          carrierMessageId: m.providerMessageId,
          receivedAt: m.receivedAt,
          keyword,
          conversationChannel: t.conversationChannel,
        },
      },
      ctx,
      o.readYourWrites ? { readYourWrites: true } : {},
    );
    if (keyword) await this.honourKeyword(t, ctx, { ...keyword, messageId, conversationId, line, from: m.from });
    return { messageId };
  }

  /** STOP/START change consent; each keyword gets its configured answer (docs/messaging.md#opt-out). */
  private async honourKeyword(
    t: MessageTransport,
    ctx: RequestContext,
    k: { kind: ConsentKeyword; keyword: string; messageId: string; conversationId: string; line: InboundLine; from: string },
  ): Promise<void> {
    const settings = await this.settings.of(ctx.accountId);
    const scope = settings.optOutScope === 'account' ? null : k.line.numberId;
    if (k.kind !== 'help')
      await this.exec.execute(
        consentDecider,
        consentStream(ctx.accountId, k.from),
        {
          type: k.kind === 'stop' ? 'OptOut' : 'OptIn',
          data: { recipient: k.from, numberId: scope, keyword: k.keyword, messageId: k.messageId },
        },
        { ...ctx, causationId: null },
      );
    const body = k.kind === 'stop' ? settings.stopReply : k.kind === 'start' ? settings.startReply : settings.helpReply;
    const measured = t.texts?.measure(body) ?? null;
    await this.exec.execute(
      conversationDecider,
      conversationStream(k.conversationId),
      {
        type: 'RecordOutbound',
        data: {
          conversationId: k.conversationId,
          messageId: this.ids.derived('msg', 'auto-reply', k.messageId),
          numberId: k.line.numberId,
          phoneNumber: k.line.phoneNumber,
          agentId: k.line.agentId,
          participant: k.from,
          participants: null,
          groupName: null,
          body,
          mediaUrls: [],
          channel: t.inboundChannel([]),
          encoding: measured?.encoding ?? null,
          segments: measured?.segments ?? null,
          replyToMessageId: k.messageId,
          sendStyle: null,
          kind: 'auto_reply',
          rules: { streakLimit: settings.streakLimit, inboundOnly: false },
        },
      },
      ctx,
    );
  }

  /** A reaction to a message of the account, named by this platform's id or the provider's. */
  private async reaction(
    t: MessageTransport,
    m: InboundMessage,
    r: NonNullable<InboundMessage['reaction']>,
    accountId: string,
    ctx: RequestContext,
  ): Promise<{ messageId: string } | null> {
    const target =
      (await this.conversations.message(accountId, r.target))?.id ??
      (await this.byProviderId(t, r.target).then((x) => (x && x.accountId === accountId ? x.messageId : null)));
    if (!target) {
      this.log.warn(
        { channel: t.channel, providerMessageId: m.providerMessageId, target: r.target },
        'inbound reaction to an unknown message: dropped',
      );
      return null;
    }
    // an empty reaction takes one back on the platforms that have them; reactions here are kept as they came
    if (r.reaction === '') return null;
    const reactionId = t.inboundReactionId(m.providerMessageId);
    await this.exec.execute(
      messageDecider,
      messageStream(target),
      { type: 'React', data: { messageId: target, reactionId, reactionType: r.reaction, direction: 'inbound', fromNumber: m.from } },
      ctx,
    );
    return { messageId: reactionId };
  }

  async receipt(r: DeliveryReceipt): Promise<void> {
    const t = this.transport(r.channel);
    const found = await this.byProviderId(t, r.providerMessageId);
    if (!found) throw new Error(`no ${r.channel} message with provider id ${r.providerMessageId} yet`);
    await this.exec.execute(
      messageDecider,
      messageStream(found.messageId),
      {
        type: 'RecordReceipt',
        data: {
          messageId: found.messageId,
          receiptId: r.receiptId,
          carrierMessageId: r.providerMessageId,
          status: r.status,
          at: r.at,
          failure: r.status === 'failed' ? t.failure(r.failure ?? { code: null, detail: null }) : null,
        },
      },
      this.ctx(t, found.accountId, r.providerMessageId),
    );
  }

  /**
   * The message a provider id of this channel names. A receipt can overtake the record of the submission it is about
   * (a provider may report `sent` before its answer to the send is recorded): then look again as the messaging read
   * model advances, for a few seconds, before giving up (the provider reports again).
   */
  private async byProviderId(t: MessageTransport, providerMessageId: string) {
    return this.readModels.waitForRow(() => this.conversations.messageIdByProviderId(t.carries, providerMessageId), {
      tables: ['message_carrier_ids'],
      withinMs: OVERTAKEN_REPORT_WAIT_MS,
    });
  }
}

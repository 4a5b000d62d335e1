import { agentDecider } from '../../domain/agent/agent.decider.js';
import { chatappNumberDecider, chatappNumberStream } from '../../domain/chatapp/chatapp-number.decider.js';
import { connectionDecider, connectionStream } from '../../domain/chatapp/connection.decider.js';
import { chatappFailure } from '../../domain/chatapp/platform-codes.js';
import { templateDecider, templateStream } from '../../domain/chatapp/template.decider.js';
import { conversationDecider } from '../../domain/conversation/conversation.decider.js';
import { messageDecider } from '../../domain/message/message.decider.js';
import { phoneNumberDecider } from '../../domain/phone-number/phone-number.decider.js';
import { streams } from '../../domain/shared/streams.js';
import type { ConversationQueries } from '../messaging/conversation-queries.port.js';
import type { EventStorePort } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { ChatappEventsPort, ChatStatus, InboundChat, TemplateReview } from './chat-platform.port.js';
import { chatappIds } from './chatapp-ids.js';
import type { ChatappQueries } from './chatapp-queries.port.js';
import type { ChatappSettingsService } from './chatapp-settings.js';

export const PLATFORM_ACTOR = 'system:chatapp-platform';

/**
 * What the chat platform reports, recorded (docs/chatapp.md#receiving): inbound messages and media on the line's chat
 * conversation (so they reach the webhook as `agent.message` with channel `chatapp`), reactions on the message they
 * are about (`agent.reaction`), statuses of sent messages (sent, delivered, read, failed with a platform code), and
 * template reviews. Ids derive from the platform's, so a report delivered twice is recorded once.
 */
export class ChatappEventsHandler implements ChatappEventsPort {
  private readonly chatIds: ReturnType<typeof chatappIds>;

  constructor(
    private readonly exec: CommandExecutor,
    ids: IdsPort,
    private readonly queries: ChatappQueries,
    private readonly conversations: ConversationQueries,
    private readonly settings: ChatappSettingsService,
    private readonly readModels: ReadModelsPort,
    private readonly store: EventStorePort,
    private readonly log: LoggerPort,
  ) {
    this.chatIds = chatappIds(ids);
  }

  private ctx(accountId: string, correlationId: string): RequestContext {
    return { accountId, requestId: null, correlationId, actor: PLATFORM_ACTOR };
  }

  async inbound(m: InboundChat): Promise<{ messageId: string } | null> {
    const line = await this.lineOf(m.phoneNumberId);
    if (!line) {
      this.log.warn(
        { phoneNumberId: m.phoneNumberId, platformMessageId: m.platformMessageId },
        'inbound chat message for a number that is not bound here: dropped',
      );
      return null;
    }
    if (!(await this.settings.of(line.accountId)).enabled) {
      this.log.warn(
        { accountId: line.accountId, platformMessageId: m.platformMessageId },
        'inbound chat message while the channel is switched off: dropped',
      );
      return null;
    }
    const ctx = this.ctx(line.accountId, m.platformMessageId);
    if (m.reaction) return this.reaction(m, line.accountId, ctx);
    const messageId = this.chatIds.inboundMessage(m.platformMessageId);
    const conversationId = this.chatIds.conversation(line.accountId, line.lineId, m.from);
    await this.exec.execute(
      conversationDecider,
      streams.conversation(conversationId),
      {
        type: 'RecordInbound',
        data: {
          conversationId,
          messageId,
          numberId: line.lineId,
          phoneNumber: line.phoneNumber,
          agentId: line.agentId,
          participant: m.from,
          participants: null,
          groupName: null,
          from: m.from,
          body: m.body,
          mediaUrls: m.mediaUrls,
          channel: 'chatapp',
          encoding: null,
          segments: null,
          carrierMessageId: m.platformMessageId,
          receivedAt: m.receivedAt,
          keyword: null,
          conversationChannel: 'chatapp',
        },
      },
      ctx,
    );
    return { messageId };
  }

  /** The bound line of a platform number: its account, line id, E.164 and agent (the native number's, when dual). */
  private async lineOf(phoneNumberId: string) {
    const { state: b } = await this.exec.load(chatappNumberDecider, chatappNumberStream(this.chatIds.binding(phoneNumberId)));
    if (b.status !== 'bound' || b.line === null) return null;
    const { state: c } = await this.exec.load(connectionDecider, connectionStream(b.connectionId));
    if (c.status !== 'active') return null;
    let agentId = b.agentId;
    if (b.line.nativeNumberId) {
      const { state: n } = await this.exec.load(phoneNumberDecider, streams.phoneNumber(b.line.nativeNumberId));
      agentId = n.status === 'active' ? n.agentId : null;
    } else if (agentId) {
      const { state: a } = await this.exec.load(agentDecider, streams.agent(agentId));
      if (a.status !== 'active') agentId = null;
    }
    return { accountId: b.accountId, lineId: b.line.lineId, phoneNumber: b.line.phoneNumber, agentId };
  }

  private async reaction(m: InboundChat, accountId: string, ctx: RequestContext): Promise<{ messageId: string } | null> {
    const r = m.reaction!;
    const target =
      (await this.conversations.message(accountId, r.messageId))?.id ??
      (await this.byPlatformId(r.messageId).then((x) => (x && x.accountId === accountId ? x.messageId : null)));
    if (!target) {
      this.log.warn({ platformMessageId: m.platformMessageId, target: r.messageId }, 'chat reaction to an unknown message: dropped');
      return null;
    }
    // an empty emoji takes a reaction back on the platform; reactions here are kept as they came
    if (r.emoji === '') return null;
    const reactionId = this.chatIds.inboundReaction(m.platformMessageId);
    await this.exec.execute(
      messageDecider,
      streams.message(target),
      { type: 'React', data: { messageId: target, reactionId, reactionType: r.emoji, direction: 'inbound', fromNumber: m.from } },
      ctx,
    );
    return { messageId: reactionId };
  }

  async status(s: ChatStatus): Promise<void> {
    const found = await this.byPlatformId(s.platformMessageId);
    if (!found) throw new Error(`no message with platform id ${s.platformMessageId} yet`);
    await this.exec.execute(
      messageDecider,
      streams.message(found.messageId),
      {
        type: 'RecordReceipt',
        data: {
          messageId: found.messageId,
          receiptId: s.statusId,
          carrierMessageId: s.platformMessageId,
          status: s.status,
          at: s.at,
          failure: s.status === 'failed' ? chatappFailure(s.error?.code ?? 0, s.error?.detail ?? null) : null,
        },
      },
      this.ctx(found.accountId, s.platformMessageId),
    );
  }

  async templateReviewed(t: TemplateReview): Promise<void> {
    let found = await this.queries.templatesByPlatformId(t.platformTemplateId);
    if (found.length === 0) {
      await this.readModels.waitFor(await this.store.headCheckpoint(), ['ChatappTemplateSubmitted']);
      found = await this.queries.templatesByPlatformId(t.platformTemplateId);
    }
    if (found.length === 0) throw new Error(`no template with platform id ${t.platformTemplateId} yet`);
    for (const f of found)
      await this.exec.execute(
        templateDecider,
        templateStream(f.templateId),
        {
          type: 'RecordTemplateReviewed',
          data: { templateId: f.templateId, platformTemplateId: t.platformTemplateId, approved: t.approved, reason: t.reason },
        },
        this.ctx(f.accountId, t.platformTemplateId),
      );
  }

  /** The message a platform id names; a status can overtake the projection of its send, so wait for the log's head once. */
  private async byPlatformId(platformMessageId: string) {
    const found = await this.conversations.messageIdByCarrierId(platformMessageId);
    if (found) return found;
    await this.readModels.waitFor(await this.store.headCheckpoint(), ['MessageSubmitted']);
    return this.conversations.messageIdByCarrierId(platformMessageId);
  }
}

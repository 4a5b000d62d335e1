import { conversationDecider } from '../../domain/conversation/conversation.decider.js';
import { messageDecider } from '../../domain/message/message.decider.js';
import { richLineDecider, richLineStream } from '../../domain/rich/rich-line.decider.js';
import { streams } from '../../domain/shared/streams.js';
import type { NumberQueries } from '../numbers/number-queries.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { RICH_CHANNEL } from './rich-commands.js';
import type { RichEventsPort } from './rich-provider.port.js';

export const RICH_PROVIDER_ACTOR = 'system:rich-provider';

/**
 * What the rich-messaging provider reports, recorded (docs/rich-messaging.md#the-provider): the native numbers it
 * starts or stops serving (they become rich lines, or stop being ones), messages people send to a rich line, and the
 * statuses of the messages it was given
 * (delivered, read: the read receipts; failed). Each report is keyed by the provider's ids, so one reported twice is
 * recorded once.
 */
export class RichEventsHandler implements RichEventsPort {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly numbers: NumberQueries,
    private readonly log: LoggerPort,
  ) {}

  private ctx(accountId: string, correlationId: string): RequestContext {
    return { accountId, requestId: null, correlationId, actor: RICH_PROVIDER_ACTOR };
  }

  async lineActivated(phoneNumber: string): Promise<{ numberId: string } | null> {
    const n = await this.numbers.activeByPhoneNumber(phoneNumber);
    if (!n) {
      this.log.warn({ phoneNumber }, 'the rich provider serves a number that is not active here: ignored');
      return null;
    }
    await this.exec.execute(
      richLineDecider,
      richLineStream(n.id),
      { type: 'ActivateRichLine', data: { numberId: n.id, phoneNumber } },
      this.ctx(n.accountId, `rich-line:${phoneNumber}`),
      { readYourWrites: true },
    );
    return { numberId: n.id };
  }

  async lineDeactivated(phoneNumber: string): Promise<{ numberId: string } | null> {
    const n = await this.numbers.activeByPhoneNumber(phoneNumber);
    if (!n) return null;
    await this.exec.execute(
      richLineDecider,
      richLineStream(n.id),
      { type: 'DeactivateRichLine', data: { numberId: n.id } },
      this.ctx(n.accountId, `rich-line:${phoneNumber}`),
      { readYourWrites: true },
    );
    return { numberId: n.id };
  }

  /** An inbound message on a rich line, on the participant's `imessage` conversation (ids derived from the provider's). */
  async inbound(m: Parameters<RichEventsPort['inbound']>[0]): Promise<{ messageId: string } | null> {
    const n = await this.numbers.activeByPhoneNumber(m.to);
    if (!n) return null;
    const { state: line } = await this.exec.load(richLineDecider, richLineStream(n.id));
    if (line.status !== 'active') return null;
    const conversationId = this.ids.derived('conv', n.accountId, n.id, RICH_CHANNEL, m.from);
    const messageId = this.ids.derived('msg', 'inbound', 'rich', m.providerMessageId);
    await this.exec.execute(
      conversationDecider,
      streams.conversation(conversationId),
      {
        type: 'RecordInbound',
        data: {
          conversationId,
          messageId,
          numberId: n.id,
          phoneNumber: n.phoneNumber,
          agentId: n.agentId,
          participant: m.from,
          participants: null,
          groupName: null,
          from: m.from,
          body: m.body,
          mediaUrls: m.mediaUrls,
          channel: RICH_CHANNEL,
          encoding: null,
          segments: null,
          conversationChannel: RICH_CHANNEL,
          carrierMessageId: m.providerMessageId,
          receivedAt: m.receivedAt,
          keyword: null,
        },
      },
      this.ctx(n.accountId, m.providerMessageId),
      { readYourWrites: true },
    );
    return { messageId };
  }

  async status(s: Parameters<RichEventsPort['status']>[0]): Promise<boolean> {
    const stream = streams.message(s.messageId);
    const { state, events } = await this.exec.load(messageDecider, stream);
    if (!state.exists) return false;
    await this.exec.execute(
      messageDecider,
      stream,
      {
        type: 'RecordReceipt',
        data: {
          messageId: s.messageId,
          receiptId: s.receiptId,
          carrierMessageId: s.providerMessageId,
          status: s.status,
          at: s.at,
          failure:
            s.status === 'failed'
              ? {
                  failureReason: s.reason ?? 'The rich-messaging provider could not deliver the message.',
                  errorCode: null,
                  failureCategory: 'provider',
                  retryable: false,
                }
              : null,
        },
      },
      this.ctx(events[0]!.metadata.accountId, s.providerMessageId),
    );
    return true;
  }
}

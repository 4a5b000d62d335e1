import type { Channel } from '../../domain/conversation/conversation.decider.js';
import { type Failure, messageDecider, messageStream } from '../../domain/message/message.decider.js';
import { richConversationDecider, richConversationStream } from '../../domain/rich/rich-conversation.decider.js';
import { richLineDecider, richLineStream } from '../../domain/rich/rich-line.decider.js';
import {
  DeliveryRefused,
  type InboundLine,
  type MessageTransport,
  type OutboundMessage,
  type OutboundReaction,
  type ProviderFailure,
} from '../messaging/delivery/transport.port.js';
import type { NumberQueries } from '../numbers/number-queries.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { RICH_CHANNEL } from './rich-commands.js';
import { RichProviderError, type RichProviderPort } from './rich-provider.port.js';

export const RICH_PROVIDER_ACTOR = 'system:rich-provider';
export const RICH_SUBMISSION_UNKNOWN = 'The rich-messaging provider did not answer the submission. Retry shortly.';

const refused = (reason: string): Failure => ({ failureReason: reason, errorCode: null, failureCategory: 'provider', retryable: false });

/** A rich conversation's id: one per account, number and participant, beside the texts one (docs/rich-messaging.md#sending). */
export const richConversationId = (ids: IdsPort, accountId: string, numberId: string, participant: string): string =>
  ids.derived('conv', accountId, numberId, RICH_CHANNEL, participant);

/** The provider's id of a message, from its submission (null before it was submitted). */
export async function providerMessageIdOf(exec: CommandExecutor, messageId: string): Promise<string | null> {
  const { events } = await exec.load(messageDecider, messageStream(messageId));
  const submitted = events.find((e) => e.type === 'MessageSubmitted');
  return submitted?.type === 'MessageSubmitted' ? (submitted.data.carrierMessageIds[0] ?? null) : null;
}

/**
 * The rich channel's transport, `imessage` (docs/rich-messaging.md#delivery): messages go to the provider keyed by the
 * message id, with their send style and the provider's id of the message they answer; a refusal fails the message
 * with the provider's reason (`failureCategory: provider`). Reactions to `imessage` messages go to the provider too,
 * keyed by the reaction id, and are recorded as sent on the conversation's rich stream. Inbound messages go to the
 * account's active number of that E.164 while it is a rich line.
 */
export class RichTransport implements MessageTransport {
  readonly channel = RICH_CHANNEL;
  readonly carries = [RICH_CHANNEL] as const;
  readonly actor = RICH_PROVIDER_ACTOR;
  readonly conversationChannel = RICH_CHANNEL;
  readonly unanswered: Failure = { ...refused(RICH_SUBMISSION_UNKNOWN), failureCategory: 'transient', retryable: true };

  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly provider: RichProviderPort,
    private readonly numbers: NumberQueries,
    private readonly log: LoggerPort,
  ) {}

  async submit(d: OutboundMessage): Promise<readonly string[]> {
    const replyTo = d.replyToMessageId ? await providerMessageIdOf(this.exec, d.replyToMessageId) : null;
    try {
      const r = await this.provider.send({
        idempotencyKey: d.messageId,
        from: d.from,
        to: d.to,
        body: d.body,
        mediaUrls: d.mediaUrls,
        sendStyle: d.sendStyle,
        replyToProviderMessageId: replyTo,
      });
      return [r.providerMessageId];
    } catch (err) {
      if (err instanceof RichProviderError) throw new DeliveryRefused(refused(err.reason));
      throw err;
    }
  }

  failure(f: ProviderFailure): Failure {
    return refused(f.detail ?? 'The rich-messaging provider could not deliver the message.');
  }

  async react(d: OutboundReaction, ctx: RequestContext): Promise<void> {
    const stream = richConversationStream(d.conversationId);
    const { state } = await this.exec.state(richConversationDecider, stream);
    if (state.settled.includes(d.reactionId)) return;
    const { state: m, events } = await this.exec.load(messageDecider, messageStream(d.messageId));
    if (!m.exists) return;
    const first = events[0]!;
    const participant = first.type === 'MessageQueued' ? first.data.to : first.type === 'MessageReceived' ? first.data.from : null;
    if (!participant) return;
    try {
      await this.provider.react({
        idempotencyKey: d.reactionId,
        from: d.fromNumber,
        to: participant,
        providerMessageId: await providerMessageIdOf(this.exec, d.messageId),
        reaction: d.reactionType,
      });
    } catch (err) {
      // a reaction the provider refuses stays recorded here: the refusal is logged, never tried again
      if (err instanceof RichProviderError)
        return void this.log.warn({ err, reactionId: d.reactionId }, 'rich provider refused a reaction');
      throw err;
    }
    await this.exec.execute(
      richConversationDecider,
      stream,
      { type: 'RecordReactionSent', data: { conversationId: d.conversationId, reactionId: d.reactionId, messageId: d.messageId } },
      ctx,
    );
  }

  async line(phoneNumber: string): Promise<InboundLine | null> {
    const n = await this.numbers.activeByPhoneNumber(phoneNumber);
    const { state } = n ? await this.exec.load(richLineDecider, richLineStream(n.id)) : { state: null };
    if (!n || state?.status !== 'active') {
      this.log.warn({ to: phoneNumber }, 'inbound rich message for a number that is not a rich line here: dropped');
      return null;
    }
    return { accountId: n.accountId, numberId: n.id, phoneNumber: n.phoneNumber, agentId: n.agentId };
  }

  conversationId(line: InboundLine, participant: string): string {
    return richConversationId(this.ids, line.accountId, line.numberId, participant);
  }

  inboundMessageId(providerMessageId: string): string {
    return this.ids.derived('msg', 'inbound', 'rich', providerMessageId);
  }

  inboundReactionId(providerMessageId: string): string {
    return this.ids.derived('rxn', 'inbound', 'rich', providerMessageId);
  }

  inboundChannel(): Channel {
    return RICH_CHANNEL;
  }
}

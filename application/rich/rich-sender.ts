import type { ConversationEvent } from '../../domain/conversation/conversation.decider.js';
import { type Failure, type MessageEvent, messageDecider } from '../../domain/message/message.decider.js';
import { richConversationDecider, richConversationStream } from '../../domain/rich/rich-conversation.decider.js';
import { streams } from '../../domain/shared/streams.js';
import { MAX_SUBMISSION_ERRORS } from '../messaging/message-sender.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { ProcessManager } from '../shared/process-manager.js';
import { RICH_CHANNEL } from './rich-commands.js';
import { RichProviderError, type RichProviderPort } from './rich-provider.port.js';

type Handled = Extract<ConversationEvent, { type: 'OutboundMessageAccepted' }> | Extract<MessageEvent, { type: 'MessageReactionAdded' }>;

const refused = (reason: string): Failure => ({ failureReason: reason, errorCode: null, failureCategory: 'provider', retryable: false });
export const RICH_SUBMISSION_UNKNOWN = 'The rich-messaging provider did not answer the submission. Retry shortly.';

/** The provider's id of a message, from its submission (null before it was submitted). */
export async function providerMessageIdOf(exec: CommandExecutor, messageId: string): Promise<string | null> {
  const { events } = await exec.load(messageDecider, streams.message(messageId));
  const submitted = events.find((e) => e.type === 'MessageSubmitted');
  return submitted?.type === 'MessageSubmitted' ? (submitted.data.carrierMessageIds[0] ?? null) : null;
}

/**
 * Hands accepted imessage messages to the provider (docs/rich-messaging.md#delivery): queued on the message's own
 * stream, then sent, keyed by the message id; a refusal fails the message, an unknown outcome is tried again up to
 * MAX_SUBMISSION_ERRORS times. The provider's statuses (delivered, read) come back through RichEventsHandler. Outbound
 * reactions to imessage messages are handed over the same way, keyed by the reaction id, and recorded as sent on the
 * conversation's rich stream.
 */
export class RichSender extends ProcessManager<Handled> {
  readonly name = 'rich_sender';
  readonly handles = ['OutboundMessageAccepted', 'MessageReactionAdded'] as const;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly provider: RichProviderPort,
    private readonly log: LoggerPort,
  ) {
    super();
  }

  protected instanceOf(e: RecordedEvent<Handled>): string {
    return e.data.messageId;
  }

  protected async react(e: RecordedEvent<Handled>, ctx: RequestContext): Promise<void> {
    if (e.data.channel !== RICH_CHANNEL) return;
    if (e.type === 'MessageReactionAdded') return this.reaction(e, ctx);
    const d = e.data;
    const stream = streams.message(d.messageId);
    const { sendStyle, reengagement: _r, template: _t, ...facts } = d;
    const queued = await this.exec.execute(messageDecider, stream, { type: 'Queue', data: facts }, ctx);
    if (!queued.state.exists || queued.state.status !== 'queued') return;
    const replyTo = d.replyToMessageId ? await providerMessageIdOf(this.exec, d.replyToMessageId) : null;
    let providerMessageId: string;
    try {
      const r = await this.provider.send({
        idempotencyKey: d.messageId,
        from: d.from,
        to: d.to,
        body: d.body,
        mediaUrls: d.mediaUrls,
        sendStyle,
        replyToProviderMessageId: replyTo,
      });
      providerMessageId = r.providerMessageId;
    } catch (err) {
      if (err instanceof RichProviderError)
        return void (await this.exec.execute(
          messageDecider,
          stream,
          { type: 'Fail', data: { messageId: d.messageId, ...refused(err.reason) } },
          ctx,
        ));
      const r = await this.exec.execute(
        messageDecider,
        stream,
        { type: 'RecordSubmissionError', data: { messageId: d.messageId, error: String(err) } },
        ctx,
      );
      const errors = r.state.exists ? r.state.submissionErrors : MAX_SUBMISSION_ERRORS;
      if (errors >= MAX_SUBMISSION_ERRORS)
        return void (await this.exec.execute(
          messageDecider,
          stream,
          {
            type: 'Fail',
            data: { messageId: d.messageId, ...refused(RICH_SUBMISSION_UNKNOWN), failureCategory: 'transient', retryable: true },
          },
          ctx,
        ));
      this.log.warn({ err, messageId: d.messageId, attempt: errors }, 'rich provider send failed; retrying');
      throw err;
    }
    await this.exec.execute(
      messageDecider,
      stream,
      { type: 'RecordSubmission', data: { messageId: d.messageId, carrierMessageIds: [providerMessageId] } },
      ctx,
    );
  }

  private async reaction(e: RecordedEvent<Extract<Handled, { type: 'MessageReactionAdded' }>>, ctx: RequestContext): Promise<void> {
    const d = e.data;
    if (d.direction !== 'outbound') return;
    const stream = richConversationStream(d.conversationId);
    const { state } = await this.exec.load(richConversationDecider, stream);
    if (state.settled.includes(d.reactionId)) return;
    const { state: m, events } = await this.exec.load(messageDecider, streams.message(d.messageId));
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
}

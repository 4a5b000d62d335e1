import type { ConversationEvent } from '../../../domain/conversation/conversation.decider.js';
import { type Failure, type MessageEvent, messageDecider, messageStream } from '../../../domain/message/message.decider.js';
import type { RecordedEvent } from '../../ports/event-store.port.js';
import type { LoggerPort } from '../../ports/logger.port.js';
import type { RequestContext } from '../../shared/context.js';
import type { CommandExecutor } from '../../shared/execute.js';
import { ProcessManager } from '../../shared/process-manager.js';
import type { MessageTransports } from './message-transports.js';
import { DeliveryRefused, type MessageTransport, type OutboundMessage, type Preflight } from './transport.port.js';

type Handled =
  | Extract<ConversationEvent, { type: 'OutboundMessageAccepted' | 'InboundMessageReceived' }>
  | Extract<MessageEvent, { type: 'MessageReactionAdded' }>;

/** Submissions whose outcome stayed unknown this many times fail the message (with the transport's `unanswered`). */
export const MAX_SUBMISSION_ERRORS = 3;

/**
 * The one delivery pipeline (docs/messaging.md#delivery-one-pipeline). Every message recorded on a conversation gets its
 * own stream here; an outbound one then goes, whatever its channel, through its transport: queued, the preflight that
 * may fail it without sending (texts: the recipient opted out, a US number without an approved 10DLC registration),
 * the submission, keyed by the message id so that a crash between submission and record never sends twice, and the
 * outcome (submitted, refused, or failed after MAX_SUBMISSION_ERRORS unknown outcomes). Reactions recorded here on a
 * message go to its transport when the transport passes them on. Receipts come back through InboundMessages.
 */
export class MessageDelivery extends ProcessManager<Handled> {
  readonly name = 'message_delivery';
  readonly handles = ['OutboundMessageAccepted', 'InboundMessageReceived', 'MessageReactionAdded'] as const;
  /** the channels' own process managers it took over: it starts where the furthest behind of them was */
  readonly replaces = ['message_sender', 'chatapp_sender', 'rich_sender'] as const;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly transports: MessageTransports,
    private readonly log: LoggerPort,
  ) {
    super();
  }

  protected instanceOf(e: RecordedEvent<Handled>): string {
    return e.data.messageId;
  }

  protected async react(e: RecordedEvent<Handled>, ctx: RequestContext): Promise<void> {
    switch (e.type) {
      case 'InboundMessageReceived': {
        const { keyword: _k, ...d } = e.data;
        // the message's record on its conversation is its first: its own stream starts here (a replay finds it, and reads)
        await this.exec.execute(messageDecider, messageStream(d.messageId), { type: 'Receive', data: d }, ctx, { newStream: true });
        return;
      }
      case 'MessageReactionAdded': {
        const t = this.transports.carrying(e.data.channel);
        if (e.data.direction === 'outbound' && t?.react) await t.react(e.data, ctx);
        return;
      }
      case 'OutboundMessageAccepted': {
        const t = this.transports.carrying(e.data.channel);
        if (!t) return void this.log.warn({ messageId: e.data.messageId, channel: e.data.channel }, 'no transport carries this channel');
        return this.deliver(t, e.data, ctx);
      }
    }
  }

  private async deliver(t: MessageTransport, d: OutboundMessage, ctx: RequestContext): Promise<void> {
    const stream = messageStream(d.messageId);
    const { sendStyle: _s, reengagement: _r, template: _t, ...facts } = d;
    // as for a received message, the stream starts with this command (docs/event-store.md#streams-known-to-be-new)
    const queued = await this.exec.execute(messageDecider, stream, { type: 'Queue', data: facts }, ctx, { newStream: true });
    if (!queued.state.exists || queued.state.status !== 'queued') return;
    const fail = async (f: Failure) => {
      await this.exec.execute(messageDecider, stream, { type: 'Fail', data: { messageId: d.messageId, ...f } }, ctx);
    };

    const ready: Preflight = t.preflight ? await t.preflight(d, ctx) : { failure: null, recipients: d.recipients };
    if (ready.failure) return fail(ready.failure);
    let providerIds: readonly string[];
    try {
      providerIds = await t.submit(d, ready.recipients, ctx);
    } catch (err) {
      if (err instanceof DeliveryRefused) return fail(err.failure);
      const r = await this.exec.execute(
        messageDecider,
        stream,
        { type: 'RecordSubmissionError', data: { messageId: d.messageId, error: String(err) } },
        ctx,
      );
      const errors = r.state.exists ? r.state.submissionErrors : MAX_SUBMISSION_ERRORS;
      if (errors >= MAX_SUBMISSION_ERRORS) return fail(t.unanswered);
      this.log.warn({ err, messageId: d.messageId, channel: t.channel, attempt: errors }, 'submission failed; retrying');
      throw err;
    }
    await this.exec.execute(
      messageDecider,
      stream,
      { type: 'RecordSubmission', data: { messageId: d.messageId, carrierMessageIds: providerIds } },
      ctx,
    );
  }
}

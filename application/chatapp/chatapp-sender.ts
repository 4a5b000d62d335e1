import { chatappNumberDecider, chatappNumberStream } from '../../domain/chatapp/chatapp-number.decider.js';
import { connectionDecider, connectionStream } from '../../domain/chatapp/connection.decider.js';
import { chatappFailure } from '../../domain/chatapp/platform-codes.js';
import { templateDecider, templateStream } from '../../domain/chatapp/template.decider.js';
import type { ConversationEvent } from '../../domain/conversation/conversation.decider.js';
import { type Failure, messageDecider } from '../../domain/message/message.decider.js';
import { streams } from '../../domain/shared/streams.js';
import { MAX_SUBMISSION_ERRORS } from '../messaging/message-sender.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { ProcessManager } from '../shared/process-manager.js';
import { ChatPlatformError, type ChatPlatformPort, type OutboundContent, type TokenSealerPort } from './chat-platform.port.js';
import { chatappIds } from './chatapp-ids.js';
import type { ChatappQueries } from './chatapp-queries.port.js';

type Handled = Extract<ConversationEvent, { type: 'OutboundMessageAccepted' }>;

/** Failures the platform side records without the platform (docs/chatapp.md#failures). */
const setupFailure = (reason: string): Failure => ({
  failureReason: reason,
  errorCode: null,
  failureCategory: 'configuration',
  retryable: false,
});
export const UNBOUND_REASON = 'The chat-app number is no longer bound (unbound, or its connection was deleted).';
export const SUBMISSION_UNKNOWN_REASON = 'The chat platform did not answer the submission. Retry shortly.';

/**
 * Hands accepted chat-app messages to the platform (docs/chatapp.md#delivery): queued on the message's own stream,
 * then the checks that fail a message without sending it (the number is still bound, its connection active), then
 * the send, keyed by the message id. The platform's statuses (sent, delivered, read, failed with a platform code)
 * come back through ChatappEventsHandler, as a carrier's receipts do.
 */
export class ChatappSender extends ProcessManager<Handled> {
  readonly name = 'chatapp_sender';
  readonly handles = ['OutboundMessageAccepted'] as const;
  private readonly chatIds: ReturnType<typeof chatappIds>;

  constructor(
    private readonly exec: CommandExecutor,
    ids: IdsPort,
    private readonly platform: ChatPlatformPort,
    private readonly sealer: TokenSealerPort,
    private readonly queries: ChatappQueries,
    private readonly log: LoggerPort,
  ) {
    super();
    this.chatIds = chatappIds(ids);
  }

  protected instanceOf(e: RecordedEvent<Handled>): string {
    return e.data.messageId;
  }

  protected async react(e: RecordedEvent<Handled>, ctx: RequestContext): Promise<void> {
    const d = e.data;
    if (d.channel !== 'chatapp') return;
    const stream = streams.message(d.messageId);
    const { sendStyle: _s, reengagement: _r, template, ...facts } = d;
    const queued = await this.exec.execute(messageDecider, stream, { type: 'Queue', data: facts }, ctx);
    if (!queued.state.exists || queued.state.status !== 'queued') return;
    const fail = (f: Failure) => this.exec.execute(messageDecider, stream, { type: 'Fail', data: { messageId: d.messageId, ...f } }, ctx);

    const line = await this.queries.boundLine(ctx.accountId, d.numberId);
    const { state: b } = line
      ? await this.exec.load(chatappNumberDecider, chatappNumberStream(line.id))
      : { state: { status: 'none' as const } };
    if (b.status !== 'bound') return void (await fail(setupFailure(UNBOUND_REASON)));
    const { state: c } = await this.exec.load(connectionDecider, connectionStream(b.connectionId));
    if (c.status !== 'active') return void (await fail(setupFailure(UNBOUND_REASON)));

    let content: OutboundContent;
    if (template) {
      const { state: t } = await this.exec.load(
        templateDecider,
        templateStream(this.chatIds.template(ctx.accountId, b.connectionId, template.name, template.language)),
      );
      if (!t.exists) return void (await fail(chatappFailure(132001, 'the template does not exist')));
      content = {
        kind: 'template',
        name: template.name,
        language: template.language,
        variables: t.content.variables,
        values: template.values,
      };
    } else if (d.mediaUrls.length > 0) content = { kind: 'media', mediaUrls: d.mediaUrls, caption: d.body };
    else content = { kind: 'text', body: d.body };

    let platformMessageId: string;
    try {
      const r = await this.platform.send({
        idempotencyKey: d.messageId,
        accessToken: this.sealer.open(c.accessTokenSealed),
        phoneNumberId: b.phoneNumberId,
        to: d.to,
        content,
      });
      platformMessageId = r.platformMessageId;
    } catch (err) {
      if (err instanceof ChatPlatformError) return void (await fail(chatappFailure(err.code, err.detail)));
      const r = await this.exec.execute(
        messageDecider,
        stream,
        { type: 'RecordSubmissionError', data: { messageId: d.messageId, error: String(err) } },
        ctx,
      );
      const errors = r.state.exists ? r.state.submissionErrors : MAX_SUBMISSION_ERRORS;
      if (errors >= MAX_SUBMISSION_ERRORS)
        return void (await fail({ ...setupFailure(SUBMISSION_UNKNOWN_REASON), failureCategory: 'transient', retryable: true }));
      this.log.warn({ err, messageId: d.messageId, attempt: errors }, 'chat platform send failed; retrying');
      throw err;
    }
    await this.exec.execute(
      messageDecider,
      stream,
      { type: 'RecordSubmission', data: { messageId: d.messageId, carrierMessageIds: [platformMessageId] } },
      ctx,
    );
  }
}

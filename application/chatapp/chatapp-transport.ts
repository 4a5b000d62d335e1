import { agentDecider, agentStream } from '../../domain/agent/agent.decider.js';
import { chatappNumberDecider, chatappNumberStream } from '../../domain/chatapp/chatapp-number.decider.js';
import { connectionDecider, connectionStream } from '../../domain/chatapp/connection.decider.js';
import { chatappFailure } from '../../domain/chatapp/platform-codes.js';
import { templateDecider, templateStream } from '../../domain/chatapp/template.decider.js';
import type { Channel } from '../../domain/conversation/conversation.decider.js';
import type { Failure } from '../../domain/message/message.decider.js';
import { phoneNumberDecider, phoneNumberStream } from '../../domain/phone-number/phone-number.decider.js';
import {
  DeliveryRefused,
  type InboundLine,
  type MessageTransport,
  type OutboundMessage,
  type ProviderFailure,
} from '../messaging/delivery/transport.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { ChatPlatformError, type ChatPlatformPort, type OutboundContent, type TokenSealerPort } from './chat-platform.port.js';
import { chatappIds } from './chatapp-ids.js';
import type { ChatappQueries } from './chatapp-queries.port.js';
import type { ChatappSettingsService } from './chatapp-settings.js';

export const PLATFORM_ACTOR = 'system:chatapp-platform';

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
 * The chat-app channel's transport (docs/chatapp.md#delivery): a message fails without being sent when its number is
 * no longer bound or its connection no longer active, or its template is gone; else it goes to the platform (text,
 * media with its caption, or the template with its values), keyed by the message id, with the connection's token
 * opened just for the call. A refusal carries the platform's code (docs/chatapp.md#error-codes), as do failed
 * statuses. Inbound messages go to the bound line of the platform's number, while the account's channel is on.
 */
export class ChatappTransport implements MessageTransport {
  readonly channel = 'chatapp';
  readonly carries = ['chatapp'] as const;
  readonly actor = PLATFORM_ACTOR;
  readonly conversationChannel = 'chatapp';
  readonly unanswered: Failure = { ...setupFailure(SUBMISSION_UNKNOWN_REASON), failureCategory: 'transient', retryable: true };
  private readonly chatIds: ReturnType<typeof chatappIds>;

  constructor(
    private readonly exec: CommandExecutor,
    ids: IdsPort,
    private readonly platform: ChatPlatformPort,
    private readonly sealer: TokenSealerPort,
    private readonly queries: ChatappQueries,
    private readonly settings: ChatappSettingsService,
    private readonly log: LoggerPort,
  ) {
    this.chatIds = chatappIds(ids);
  }

  async submit(d: OutboundMessage, _recipients: readonly string[], ctx: RequestContext): Promise<readonly string[]> {
    const line = await this.queries.boundLine(ctx.accountId, d.numberId);
    const { state: b } = line
      ? await this.exec.load(chatappNumberDecider, chatappNumberStream(line.id))
      : { state: { status: 'none' as const } };
    if (b.status !== 'bound') throw new DeliveryRefused(setupFailure(UNBOUND_REASON));
    const { state: c } = await this.exec.state(connectionDecider, connectionStream(b.connectionId));
    if (c.status !== 'active') throw new DeliveryRefused(setupFailure(UNBOUND_REASON));

    let content: OutboundContent;
    if (d.template) {
      const { name, language, values } = d.template;
      const { state: t } = await this.exec.state(
        templateDecider,
        templateStream(this.chatIds.template(ctx.accountId, b.connectionId, name, language)),
      );
      if (!t.exists) throw new DeliveryRefused(chatappFailure(132001, 'the template does not exist'));
      content = { kind: 'template', name, language, variables: t.content.variables, values };
    } else if (d.mediaUrls.length > 0) content = { kind: 'media', mediaUrls: d.mediaUrls, caption: d.body };
    else content = { kind: 'text', body: d.body };

    try {
      const r = await this.platform.send({
        idempotencyKey: d.messageId,
        accessToken: this.sealer.open(c.accessTokenSealed),
        phoneNumberId: b.phoneNumberId,
        to: d.to,
        content,
      });
      return [r.platformMessageId];
    } catch (err) {
      if (err instanceof ChatPlatformError) throw new DeliveryRefused(chatappFailure(err.code, err.detail));
      throw err;
    }
  }

  failure(f: ProviderFailure): Failure {
    return chatappFailure(Number(f.code ?? 0), f.detail);
  }

  /** The bound line of a platform number (`phone_number_id`): its account, line id, E.164 and agent (the native number's, when dual). */
  async line(phoneNumberId: string): Promise<InboundLine | null> {
    const { state: b } = await this.exec.state(chatappNumberDecider, chatappNumberStream(this.chatIds.binding(phoneNumberId)));
    const { state: c } = b.status === 'bound' ? await this.exec.load(connectionDecider, connectionStream(b.connectionId)) : { state: null };
    if (b.status !== 'bound' || b.line === null || c?.status !== 'active') {
      this.log.warn({ phoneNumberId }, 'inbound chat message for a number that is not bound here: dropped');
      return null;
    }
    if (!(await this.settings.of(b.accountId)).enabled) {
      this.log.warn({ accountId: b.accountId, phoneNumberId }, 'inbound chat message while the channel is switched off: dropped');
      return null;
    }
    let agentId = b.agentId;
    if (b.line.nativeNumberId) {
      const { state: n } = await this.exec.state(phoneNumberDecider, phoneNumberStream(b.line.nativeNumberId));
      agentId = n.status === 'active' ? n.agentId : null;
    } else if (agentId) {
      const { state: a } = await this.exec.state(agentDecider, agentStream(agentId));
      if (a.status !== 'active') agentId = null;
    }
    return { accountId: b.accountId, numberId: b.line.lineId, phoneNumber: b.line.phoneNumber, agentId };
  }

  conversationId(line: InboundLine, participant: string): string {
    return this.chatIds.conversation(line.accountId, line.numberId, participant);
  }

  inboundMessageId(providerMessageId: string): string {
    return this.chatIds.inboundMessage(providerMessageId);
  }

  inboundReactionId(providerMessageId: string): string {
    return this.chatIds.inboundReaction(providerMessageId);
  }

  inboundChannel(): Channel {
    return 'chatapp';
  }
}

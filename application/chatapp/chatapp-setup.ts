import type { ChatappNumberEvent } from '../../domain/chatapp/chatapp-number.decider.js';
import { chatappNumberDecider, chatappNumberEventTypes, chatappNumberStream } from '../../domain/chatapp/chatapp-number.decider.js';
import { type ConnectionEvent, connectionDecider, connectionStream } from '../../domain/chatapp/connection.decider.js';
import { type TemplateEvent, templateDecider, templateStream } from '../../domain/chatapp/template.decider.js';
import type { NumberQueries } from '../numbers/number-queries.port.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { ProcessManager } from '../shared/process-manager.js';
import { ChatPlatformError, type ChatPlatformPort, type TokenSealerPort } from './chat-platform.port.js';
import type { ChatappQueries } from './chatapp-queries.port.js';

type Handled =
  | Extract<ConnectionEvent, { type: 'ChatappConnectionRequested' | 'ChatappConnectionDeleted' }>
  | Extract<ChatappNumberEvent, { type: 'ChatappNumberBindRequested' }>
  | Extract<TemplateEvent, { type: 'ChatappTemplateCreated' }>;

/** A refusal's words as recorded: the platform's code and its own words (the meanings of platform-codes.ts are about sends). */
const refusal = (err: ChatPlatformError) => ({ platformCode: err.code, reason: `Chat platform error ${err.code}: ${err.detail}` });

/**
 * What setting the channel up asks of the platform (docs/chatapp.md), one step per request fact, each recorded as
 * a fact on the same stream: verify a connection's token (Activated or Failed), check and register a number
 * (Bound, on the native number's line when the account has that E.164, or BindFailed), submit a template for
 * review (Submitted, or Rejected when the platform refuses it at once), and unbind a deleted connection's numbers.
 * Every step is keyed by its stream and attempt (or submission): a repeated event finds the step done and does
 * nothing; an unknown outcome (the platform did not answer) throws, and the runner delivers the event again.
 */
export class ChatappSetup extends ProcessManager<Handled> {
  readonly name = 'chatapp_setup';
  readonly handles = [
    'ChatappConnectionRequested',
    'ChatappConnectionDeleted',
    'ChatappNumberBindRequested',
    'ChatappTemplateCreated',
  ] as const;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly platform: ChatPlatformPort,
    private readonly sealer: TokenSealerPort,
    private readonly queries: ChatappQueries,
    private readonly numbers: NumberQueries,
    private readonly readModels: ReadModelsPort,
  ) {
    super();
  }

  protected instanceOf(e: RecordedEvent<Handled>): string {
    switch (e.type) {
      case 'ChatappConnectionRequested':
      case 'ChatappConnectionDeleted':
        return connectionStream(e.data.connectionId);
      case 'ChatappNumberBindRequested':
        return chatappNumberStream(e.data.bindingId);
      case 'ChatappTemplateCreated':
        return templateStream(e.data.templateId);
    }
  }

  protected async react(e: RecordedEvent<Handled>, ctx: RequestContext): Promise<void> {
    switch (e.type) {
      case 'ChatappConnectionRequested':
        return this.verify(e.data.connectionId, e.data.attempt, ctx);
      case 'ChatappConnectionDeleted':
        return this.unbindAll(e, ctx);
      case 'ChatappNumberBindRequested':
        return this.bind(e.data.bindingId, e.data.attempt, ctx);
      case 'ChatappTemplateCreated':
        return this.submit(e.data.templateId, e.data.submission, ctx);
    }
  }

  private async verify(connectionId: string, attempt: number, ctx: RequestContext): Promise<void> {
    const { state: c } = await this.exec.state(connectionDecider, connectionStream(connectionId));
    if (c.status !== 'verifying' || c.attempt !== attempt) return;
    try {
      const ba = await this.platform.businessAccount({
        businessAccountId: c.businessAccountId,
        accessToken: this.sealer.open(c.accessTokenSealed),
      });
      await this.exec.execute(
        connectionDecider,
        connectionStream(connectionId),
        { type: 'RecordConnectionVerified', data: { connectionId, attempt, businessName: ba.name } },
        ctx,
      );
    } catch (err) {
      if (!(err instanceof ChatPlatformError)) throw err;
      await this.exec.execute(
        connectionDecider,
        connectionStream(connectionId),
        { type: 'RecordConnectionRefused', data: { connectionId, attempt, ...refusal(err) } },
        ctx,
      );
    }
  }

  private async bind(bindingId: string, attempt: number, ctx: RequestContext): Promise<void> {
    const stream = chatappNumberStream(bindingId);
    const { state: b } = await this.exec.state(chatappNumberDecider, stream);
    if (b.status !== 'binding' || b.attempt !== attempt) return;
    const failed = (platformCode: number | null, reason: string) =>
      this.exec.execute(
        chatappNumberDecider,
        stream,
        { type: 'RecordBindFailed', data: { bindingId, attempt, platformCode, reason } },
        ctx,
      );
    const { state: c } = await this.exec.state(connectionDecider, connectionStream(b.connectionId));
    if (c.status !== 'active' || c.accountId !== b.accountId) return void (await failed(null, 'the connection is not active'));
    const accessToken = this.sealer.open(c.accessTokenSealed);
    try {
      const found = (await this.platform.phoneNumbers({ businessAccountId: c.businessAccountId, accessToken })).find(
        (n) => n.phoneNumberId === b.phoneNumberId,
      );
      if (!found)
        return void (await failed(100, `the number ${b.phoneNumberId} is not a number of business account ${c.businessAccountId}`));
      await this.platform.registerNumber({ accessToken, phoneNumberId: b.phoneNumberId, pin: b.pin });
      // dual-channel: the account's own active number with the same E.164 is the line (docs/chatapp.md#dual-channel-numbers)
      const native = await this.numbers.activeByPhoneNumber(found.phoneNumber);
      const nativeNumberId = native && native.accountId === b.accountId ? native.id : null;
      await this.exec.execute(
        chatappNumberDecider,
        stream,
        {
          type: 'RecordBound',
          data: {
            bindingId,
            attempt,
            phoneNumber: found.phoneNumber,
            verifiedName: found.verifiedName,
            lineId: nativeNumberId ?? bindingId,
            nativeNumberId,
          },
        },
        ctx,
      );
    } catch (err) {
      if (!(err instanceof ChatPlatformError)) throw err;
      const r = refusal(err);
      await failed(r.platformCode, r.reason);
    }
  }

  private async submit(templateId: string, submission: number, ctx: RequestContext): Promise<void> {
    const stream = templateStream(templateId);
    const { state: t } = await this.exec.state(templateDecider, stream);
    if (!t.exists || t.submission !== submission || t.platformTemplateId !== null || t.status !== 'pending') return;
    const reviewed = (approved: boolean, reason: string | null, platformTemplateId: string | null) =>
      this.exec.execute(
        templateDecider,
        stream,
        { type: 'RecordTemplateReviewed', data: { templateId, submission, platformTemplateId, approved, reason } },
        ctx,
      );
    const { state: c } = await this.exec.state(connectionDecider, connectionStream(t.connectionId));
    if (c.status !== 'active') return void (await reviewed(false, 'the connection is not active', null));
    try {
      const r = await this.platform.submitTemplate({
        businessAccountId: c.businessAccountId,
        accessToken: this.sealer.open(c.accessTokenSealed),
        template: t.content,
      });
      await this.exec.execute(
        templateDecider,
        stream,
        { type: 'RecordTemplateSubmitted', data: { templateId, submission, platformTemplateId: r.platformTemplateId } },
        ctx,
      );
      if (r.status !== 'pending') await reviewed(r.status === 'approved', r.reason, r.platformTemplateId);
    } catch (err) {
      if (!(err instanceof ChatPlatformError)) throw err;
      await reviewed(false, refusal(err).reason, null);
    }
  }

  /** A deleted connection's numbers are unbound (its bindings, as the read model shows them once it has caught up). */
  private async unbindAll(e: RecordedEvent<Extract<Handled, { type: 'ChatappConnectionDeleted' }>>, ctx: RequestContext): Promise<void> {
    await this.readModels.waitFor(e.checkpoint, chatappNumberEventTypes);
    for (const b of await this.queries.heldByConnection(e.data.connectionId))
      await this.exec.execute(
        chatappNumberDecider,
        chatappNumberStream(b.bindingId),
        { type: 'Unbind', data: { bindingId: b.bindingId, reason: 'connection_deleted', connectionId: e.data.connectionId } },
        { ...ctx, accountId: b.accountId },
      );
  }
}

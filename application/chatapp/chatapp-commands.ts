import { agentDecider, agentStream } from '../../domain/agent/agent.decider.js';
import { type ChatappNumberState, chatappNumberDecider, chatappNumberStream } from '../../domain/chatapp/chatapp-number.decider.js';
import { type ConnectionState, connectionDecider, connectionStream } from '../../domain/chatapp/connection.decider.js';
import { type TemplateContent, templateDecider, templateStream } from '../../domain/chatapp/template.decider.js';
import { parseTemplateBody, variablesMismatch } from '../../domain/chatapp/template-body.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { IdsPort } from '../ports/ids.port.js';
import { awaitOutcome } from '../shared/await-outcome.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { Page, PageOf } from '../shared/page.js';
import type { TokenSealerPort } from './chat-platform.port.js';
import { chatappIds } from './chatapp-ids.js';
import type { ChatappNumberView, ChatappQueries, ConnectionView, TemplateView } from './chatapp-queries.port.js';
import type { ChatappSettingsService } from './chatapp-settings.js';

const invalid = (field: string, message: string) =>
  new DomainError('VALIDATION_ERROR', message, [{ field: `body.${field}`, message, type: 'value_error' }]);

const connectionNotFound = () => new DomainError('CHATAPP_CONNECTION_NOT_FOUND', 'Chat-app connection not found');

export type NewTemplate = Omit<TemplateContent, 'variables'>;

/**
 * Connections, numbers and templates of the chat-application channel (docs/chatapp.md). Connecting and binding need
 * the platform's answer: the request records what it asks, the ChatappSetup process manager asks the platform and
 * records the outcome, and the request awaits that outcome and answers it as the resource's status: `active` or
 * `bound`, `failed` with the platform's words, or `pending` after `platformTimeoutMs` (the work goes on). Templates answer at once, `pending`: their review takes its own time.
 */
export class ChatappCommands {
  private readonly chatIds: ReturnType<typeof chatappIds>;

  constructor(
    private readonly exec: CommandExecutor,
    ids: IdsPort,
    private readonly queries: ChatappQueries,
    private readonly settings: ChatappSettingsService,
    private readonly sealer: TokenSealerPort,
    private readonly o: { platformTimeoutMs: number },
  ) {
    this.chatIds = chatappIds(ids);
  }

  async connect(ctx: RequestContext, input: { businessAccountId: string; accessToken: string }): Promise<ConnectionView> {
    await this.settings.requireEnabled(ctx.accountId);
    const connectionId = this.chatIds.connection(ctx.accountId, input.businessAccountId);
    const stream = connectionStream(connectionId);
    const r = await this.exec.execute(
      connectionDecider,
      stream,
      {
        type: 'RequestConnection',
        data: { connectionId, businessAccountId: input.businessAccountId, accessTokenSealed: this.sealer.seal(input.accessToken) },
      },
      ctx,
    );
    const attempt = r.state.status === 'none' ? 0 : r.state.attempt;
    const outcome = await awaitOutcome(
      this.exec,
      connectionDecider,
      stream,
      (s) => s.status === 'none' || s.attempt !== attempt || s.status !== 'verifying',
      this.o.platformTimeoutMs,
    );
    // a refusal is the outcome, shown as the connection's `failed` status with the platform's words: the request
    // itself was sound, and what it recorded stays (docs/chatapp.md#connections)
    await this.exec.settle(outcome.events);
    return this.viewOf(ctx.accountId, connectionId);
  }

  connections(ctx: RequestContext, page: Page): Promise<PageOf<ConnectionView>> {
    return this.queries.connections(ctx.accountId, page);
  }

  async connection(ctx: RequestContext, connectionId: string): Promise<ConnectionView> {
    const c = await this.queries.connection(ctx.accountId, connectionId);
    if (!c) throw connectionNotFound();
    return c;
  }

  /** Deletes the connection; its numbers are unbound in the background (docs/chatapp.md#connections). */
  async deleteConnection(ctx: RequestContext, connectionId: string): Promise<ConnectionView> {
    const before = await this.connection(ctx, connectionId);
    await this.exec.execute(connectionDecider, connectionStream(connectionId), { type: 'DeleteConnection', data: { connectionId } }, ctx, {
      readYourWrites: true,
    });
    return before;
  }

  /** Binds a platform number of the connection's business account (docs/chatapp.md#numbers). */
  async bind(ctx: RequestContext, connectionId: string, input: { phoneNumberId: string; agentId: string | null; pin: string | null }) {
    const connection = await this.activeConnection(ctx, connectionId);
    await this.settings.requireEnabled(ctx.accountId);
    if (input.agentId) {
      const { state } = await this.exec.state(agentDecider, agentStream(input.agentId));
      if (state.status !== 'active' || state.accountId !== ctx.accountId) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
    }
    const bindingId = this.chatIds.binding(input.phoneNumberId);
    const stream = chatappNumberStream(bindingId);
    const r = await this.exec.execute(
      chatappNumberDecider,
      stream,
      {
        type: 'RequestBind',
        data: {
          bindingId,
          connectionId: connection.connectionId,
          phoneNumberId: input.phoneNumberId,
          agentId: input.agentId,
          pin: input.pin,
        },
      },
      ctx,
      { readYourWrites: true },
    );
    const attempt = r.state.status === 'none' ? 0 : r.state.attempt;
    const done = (s: ChatappNumberState) => s.status === 'none' || s.attempt !== attempt || s.status !== 'binding';
    const outcome = await awaitOutcome(this.exec, chatappNumberDecider, stream, done, this.o.platformTimeoutMs);
    await this.exec.settle(outcome.events);
    const view = await this.queries.number(ctx.accountId, connectionId, bindingId);
    if (!view) throw new DomainError('CHATAPP_NUMBER_NOT_FOUND', 'Chat-app number not found');
    // a refusal is kept as the binding's `failed` status with the platform's words, and answered as the refusal it
    // is, so a client that checks the status code never takes it for bound (docs/chatapp.md#numbers)
    if (view.status === 'failed')
      throw new DomainError(
        'CHATAPP_PLATFORM_REFUSED',
        `The chat platform refused to bind the number: ${view.failureReason ?? 'no reason given'}`,
      );
    return view;
  }

  async numbers(ctx: RequestContext, connectionId: string, page: Page): Promise<PageOf<ChatappNumberView>> {
    await this.connection(ctx, connectionId);
    return this.queries.numbers(ctx.accountId, connectionId, page);
  }

  async number(ctx: RequestContext, connectionId: string, bindingId: string): Promise<ChatappNumberView> {
    await this.connection(ctx, connectionId);
    const n = await this.queries.number(ctx.accountId, connectionId, bindingId);
    if (!n) throw new DomainError('CHATAPP_NUMBER_NOT_FOUND', 'Chat-app number not found');
    return n;
  }

  /** Unbinds a number: its conversations stay; it neither sends nor receives by the channel any more. */
  async unbind(ctx: RequestContext, connectionId: string, bindingId: string): Promise<ChatappNumberView> {
    await this.number(ctx, connectionId, bindingId);
    await this.exec.execute(
      chatappNumberDecider,
      chatappNumberStream(bindingId),
      { type: 'Unbind', data: { bindingId, reason: 'requested', connectionId } },
      ctx,
      { readYourWrites: true },
    );
    return this.number(ctx, connectionId, bindingId);
  }

  /** Creates a template and submits it for review: it answers `pending` (docs/chatapp.md#templates). */
  async createTemplate(ctx: RequestContext, connectionId: string, input: NewTemplate): Promise<TemplateView> {
    const connection = await this.activeConnection(ctx, connectionId);
    await this.settings.requireEnabled(ctx.accountId);
    const parsed = parseTemplateBody(input.body);
    if (!parsed.ok) throw invalid('body', parsed.problem);
    if (input.examples !== null) {
      const mismatch = variablesMismatch(parsed.variables, input.examples);
      if (mismatch)
        throw invalid('examples', `examples must fit the body's variables: ${mismatch.replace('template.variables', 'examples')}`);
    }
    const templateId = this.chatIds.template(ctx.accountId, connection.connectionId, input.name, input.language);
    await this.exec.execute(
      templateDecider,
      templateStream(templateId),
      { type: 'CreateTemplate', data: { templateId, connectionId: connection.connectionId, ...input, variables: parsed.variables } },
      ctx,
      { readYourWrites: true },
    );
    return this.template(ctx, connectionId, templateId);
  }

  async templates(ctx: RequestContext, connectionId: string, page: Page): Promise<PageOf<TemplateView>> {
    await this.connection(ctx, connectionId);
    return this.queries.templates(ctx.accountId, connectionId, page);
  }

  async template(ctx: RequestContext, connectionId: string, templateId: string): Promise<TemplateView> {
    await this.connection(ctx, connectionId);
    const t = await this.queries.template(ctx.accountId, connectionId, templateId);
    if (!t) throw new DomainError('CHATAPP_TEMPLATE_NOT_FOUND', 'Chat-app template not found');
    return t;
  }

  /** The connection's state from its stream: the account's, not deleted, and active (verified by the platform). */
  private async activeConnection(ctx: RequestContext, connectionId: string): Promise<Exclude<ConnectionState, { status: 'none' }>> {
    const { state } = await this.exec.state(connectionDecider, connectionStream(connectionId));
    if (state.status === 'none' || state.status === 'deleted' || state.accountId !== ctx.accountId) throw connectionNotFound();
    if (state.status !== 'active')
      throw new DomainError(
        'CHATAPP_PLATFORM_REFUSED',
        state.status === 'failed'
          ? `The connection failed (${state.failure?.reason ?? 'refused'}); connect the business account again with a valid access token`
          : 'The connection is still being verified by the platform; try again shortly',
      );
    return state;
  }

  private async viewOf(accountId: string, connectionId: string): Promise<ConnectionView> {
    const c = await this.queries.connection(accountId, connectionId);
    if (!c) throw connectionNotFound();
    return c;
  }
}

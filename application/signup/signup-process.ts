import { DomainError } from '../../domain/shared/errors.js';
import { type SignUpCommand, type SignUpEvent, signUpDecider, signUpStream } from '../../domain/signup/signup.decider.js';
import type { AccountCommands } from '../accounts/account-commands.js';
import type { AgentCommands } from '../agents/agent-commands.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import { ProcessManager } from '../shared/process-manager.js';
import type { NumberProvisioningPort } from './number-provisioning.port.js';

export const STARTER_SYSTEM_PROMPT =
  'You are a friendly, concise assistant answering calls and texts for this number. Greet the caller, find out what they need, and help.';

type Handled = Extract<SignUpEvent, { type: 'SignUpVerified' | 'SignUpRetryRequested' }>;

/**
 * The sign-up process (docs/accounts.md, "Sign-up"): a verified sign-up's plan fixed every id, so each step can
 * be repeated safely — the account (opened pending: its key is refused), the starter hosted agent, the phone
 * number (slot, purchase, first month's charge), activation — and then SignUpCompleted. A step the providers
 * refuse is recorded as SignUpStepFailed and the sign-up stays verified: the person's retried verify or the
 * recovery scheduler records SignUpRetryRequested, which drives it again.
 */
export class SignUpProcess extends ProcessManager<Handled> {
  readonly name = 'signup_process';
  readonly handles = ['SignUpVerified', 'SignUpRetryRequested'] as const;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly accounts: AccountCommands,
    private readonly agents: AgentCommands,
    private readonly numbers: NumberProvisioningPort,
    private readonly log: LoggerPort,
  ) {
    super();
  }

  protected instanceOf(e: RecordedEvent<Handled>): string {
    return e.data.verificationId;
  }

  private record(ctx: RequestContext, cmd: CommandInput<SignUpCommand>) {
    return this.exec.execute(signUpDecider, signUpStream(cmd.data.verificationId), cmd, ctx, { accountId: 'signup' });
  }

  protected async react(e: RecordedEvent<Handled>, ctx: RequestContext): Promise<void> {
    const verificationId = e.data.verificationId;
    const { state: s } = await this.exec.state(signUpDecider, signUpStream(verificationId));
    if (s.status !== 'verified') return;
    const p = s.plan;
    const acting: RequestContext = { ...ctx, accountId: p.accountId };
    try {
      await this.accounts.openForSignUp(acting, {
        accountId: p.accountId,
        name: s.agentName ? `${s.agentName}` : s.email,
        owner: { userId: p.userId, email: s.email, projectId: p.projectId },
        key: { keyId: p.keyId, prefix: p.keyPrefix, keyHash: p.keyHash },
      });
      await this.agents.create(
        acting,
        {
          name: s.agentName ?? 'My agent',
          voiceMode: 'hosted',
          systemPrompt: STARTER_SYSTEM_PROMPT,
          beginMessage: 'Hi! How can I help you today?',
        },
        p.agentId,
      );
      await this.numbers.provision(acting, { numberId: p.numberId, agentId: p.agentId, country: 'US', areaCode: null });
      await this.accounts.activate(acting, p.accountId);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      this.log.warn({ verificationId, code: err.code, failures: s.failures + 1 }, 'sign-up provisioning step failed; it can be retried');
      await this.record(ctx, { type: 'RecordStepFailed', data: { verificationId, code: err.code, message: err.message } });
      return;
    }
    await this.record(ctx, { type: 'CompleteSignUp', data: { verificationId, keyDelivered: false } });
    this.log.info({ verificationId, accountId: p.accountId }, 'sign-up completed');
  }
}

import type { AccountCommands } from '../accounts/account-commands.js';
import type { AgentCommands } from '../agents/agent-commands.js';
import { signUpDecider, type SignUpCommand, type SignUpPlan, type SignUpState } from '../../domain/signup/signup.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import { streams } from '../../domain/shared/streams.js';
import type { ApiKeySecretsPort } from '../accounts/api-key-secrets.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { MailerPort } from './mailer.port.js';
import type { NumberProvisioningPort } from './number-provisioning.port.js';
import type { OtpPort } from './otp.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';

export interface SignUpThrottleQueries {
  recentByEmail(email: string, since: Date): Promise<{ count: number; oldest: Date | null }>;
  recentByClient(clientAddress: string, since: Date): Promise<{ count: number; oldest: Date | null }>;
}

export type SignUpLimits = Readonly<{ perEmailPerHour: number; perClientPerHour: number }>;

export const STARTER_SYSTEM_PROMPT =
  'You are a friendly, concise assistant answering calls and texts for this number. Greet the caller, find out what they need, and help.';

export type VerifiedSignUp = Readonly<{
  api_key: string | null;
  account_id: string;
  user_id: string;
  project_id: string;
  agent_id: string;
  number_id: string;
  phone_number: string | null;
  message: string;
}>;

/**
 * Self-service sign-up as a process with its own stream (`signup-<verificationId>`).
 *
 * request: append SignUpRequested (only the code's hash), then e-mail the code.
 * verify: the decider checks the code and records SignUpVerified with a plan — every id (account, agent,
 * number, key) chosen up front. Provisioning then runs step by step, each step idempotent by those ids:
 * account (opened *pending*: its key is refused), starter hosted agent, phone number (slot, purchase, first
 * month's charge), activation, SignUpCompleted. A crash anywhere leaves a pending account nobody can use;
 * the recovery worker (or the person's retried verify) repeats the steps and finishes it. A retried verify
 * never creates a second account: the plan is fixed by the first successful verify.
 */
export class SignUpService {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly otp: OtpPort,
    private readonly secrets: ApiKeySecretsPort,
    private readonly mailer: MailerPort,
    private readonly throttles: SignUpThrottleQueries,
    private readonly accounts: AccountCommands,
    private readonly agents: AgentCommands,
    private readonly numbers: NumberProvisioningPort,
    private readonly limits: SignUpLimits,
    private readonly log: LoggerPort,
  ) {}

  /** Sign-up streams belong to no account yet: their events are recorded under the `signup` pseudo-account. */
  private run(verificationId: string, cmd: CommandInput<SignUpCommand>, ctx: RequestContext) {
    return this.exec.execute(signUpDecider, streams.signUp(verificationId), cmd, ctx, { accountId: 'signup', readYourWrites: true });
  }

  private async throttle(email: string, clientAddress: string | null): Promise<void> {
    const now = new Date(this.exec.now());
    const since = new Date(now.getTime() - 3600_000);
    const checks: [Promise<{ count: number; oldest: Date | null }>, number][] = [[this.throttles.recentByEmail(email, since), this.limits.perEmailPerHour]];
    if (clientAddress) checks.push([this.throttles.recentByClient(clientAddress, since), this.limits.perClientPerHour]);
    for (const [q, limit] of checks) {
      const { count, oldest } = await q;
      if (count >= limit) {
        const retryAfterSeconds = Math.max(1, Math.ceil(((oldest?.getTime() ?? now.getTime()) + 3600_000 - now.getTime()) / 1000));
        throw new DomainError('THROTTLED', `Too many sign-up requests. Retry in ${retryAfterSeconds} seconds.`, undefined, { retryAfterSeconds });
      }
    }
  }

  async request(ctx: RequestContext, o: { email: string; agentName: string | null; clientAddress: string | null }) {
    const email = o.email.trim().toLowerCase();
    await this.throttle(email, o.clientAddress);
    const verificationId = this.ids.id('ver');
    const code = this.otp.generate();
    await this.run(verificationId, {
      type: 'RequestSignUp',
      data: { verificationId, email, agentName: o.agentName, codeHash: this.otp.hash(verificationId, code), clientAddress: o.clientAddress }
    }, ctx);
    // the code exists only here and in the e-mail: it leaves the process after the request is recorded
    await this.mailer.send({
      to: email,
      subject: `Your verification code: ${code}`,
      text: `Your verification code is ${code}. It expires in 10 minutes.\n\nIf you did not ask to sign up, ignore this e-mail.`,
    });
    return { verification_id: verificationId, expires_in_seconds: 600, message: `We sent a 6-digit code to ${email}.` };
  }

  async verify(ctx: RequestContext, o: { verificationId: string; code: string; source: string | null }): Promise<VerifiedSignUp> {
    const stream = streams.signUp(o.verificationId);
    const codeHash = this.otp.hash(o.verificationId, o.code);
    const key = this.secrets.generate();
    const plan: SignUpPlan = {
      userId: this.ids.id('usr'), projectId: this.ids.id('prj'), accountId: this.ids.id('acc'), agentId: this.ids.id('agt'),
      numberId: this.ids.id('pn'), keyId: this.ids.id('key'), keyPrefix: key.prefix, keyHash: key.hash,
    };
    const r = await this.run(o.verificationId, { type: 'VerifySignUp', data: { verificationId: o.verificationId, codeHash, source: o.source, plan } }, ctx);
    if (r.events[0]?.type === 'SignUpCodeRejected') {
      const left = Math.max(0, 5 - r.events[0].data.wrongTries);
      throw new DomainError('SIGNUP_CODE_INVALID', `Wrong code; ${left} ${left === 1 ? 'try' : 'tries'} left`);
    }
    const state = r.state as SignUpState;
    if (state.status !== 'verified' && state.status !== 'completed') throw new DomainError('SIGNUP_NOT_FOUND', 'Unknown verification_id');
    const firstVerify = r.events[0]?.type === 'SignUpVerified';
    if (!firstVerify) {
      // a retried verify: only someone who has the code may resume it
      const { events } = await this.exec.load(signUpDecider, stream);
      const requested = events.find((e) => e.type === 'SignUpRequested');
      if (!requested || requested.type !== 'SignUpRequested' || requested.data.codeHash !== codeHash) {
        throw new DomainError('SIGNUP_CODE_INVALID', 'Wrong code');
      }
    }
    if (firstVerify) {
      const done = await this.provision(ctx, o.verificationId, state, true);
      return { api_key: key.key, ...done, message: 'Account ready. Save the API key now: it is shown only once.' };
    }
    if (state.keyDelivered) {
      const done = await this.provision(ctx, o.verificationId, state, true);
      return { api_key: null, ...done, message: 'This sign-up was already completed; its API key was returned by the first verify.' };
    }
    // the verify that fixed the plan never answered (a crash, a provider failure): its key never reached the
    // person, so this verify (with the right code) finishes the provisioning and hands out a replacement key
    if (state.status === 'verified') await this.provision(ctx, o.verificationId, state, false);
    const apiKey = await this.accounts.replaceKey(ctx, state.plan.accountId, state.plan.keyId);
    await this.run(o.verificationId, { type: 'RecordKeyReplaced', data: { verificationId: o.verificationId, keyId: state.plan.keyId } }, ctx);
    const done = await this.provision(ctx, o.verificationId, undefined, true);
    return { api_key: apiKey, ...done, message: 'Account ready. Save the API key now: it is shown only once.' };
  }

  /** Runs (or resumes) the provisioning steps of a verified sign-up. Every step is idempotent by the plan's ids. */
  async provision(ctx: RequestContext, verificationId: string, state?: SignUpState, keyDelivered = false): Promise<Omit<VerifiedSignUp, 'api_key' | 'message'>> {
    const s = state ?? (await this.exec.load(signUpDecider, streams.signUp(verificationId))).state;
    if (s.status !== 'verified' && s.status !== 'completed') throw new DomainError('SIGNUP_NOT_FOUND', 'Sign-up is not verified');
    const p = s.plan;
    const acting: RequestContext = { ...ctx, accountId: p.accountId };
    if (s.status === 'verified') {
      await this.accounts.openForSignUp(acting, {
        accountId: p.accountId, name: s.agentName ? `${s.agentName}` : s.email,
        owner: { userId: p.userId, email: s.email, projectId: p.projectId },
        key: { keyId: p.keyId, prefix: p.keyPrefix, keyHash: p.keyHash },
      });
      await this.agents.create(acting, { name: s.agentName ?? 'My agent', voiceMode: 'hosted', systemPrompt: STARTER_SYSTEM_PROMPT, beginMessage: 'Hi! How can I help you today?' }, p.agentId);
    }
    const number = await this.numbers.provision(acting, { numberId: p.numberId, agentId: p.agentId, country: 'US', areaCode: null });
    if (s.status === 'verified') {
      await this.accounts.activate(acting, p.accountId);
      await this.run(verificationId, { type: 'CompleteSignUp', data: { verificationId, keyDelivered } }, ctx);
      this.log.info({ verificationId, accountId: p.accountId }, 'sign-up completed');
    }
    return { account_id: p.accountId, user_id: p.userId, project_id: p.projectId, agent_id: p.agentId, number_id: p.numberId, phone_number: number.phoneNumber };
  }

  /** Gives up on a sign-up whose provisioning cannot finish (recovery worker, after its retries). */
  async fail(ctx: RequestContext, verificationId: string, reason: string): Promise<void> {
    await this.run(verificationId, { type: 'FailSignUp', data: { verificationId, reason } }, ctx);
  }
}

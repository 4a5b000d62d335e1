import { phoneNumberDecider, phoneNumberStream } from '../../domain/phone-number/phone-number.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import { type SignUpCommand, type SignUpPlan, type SignUpState, signUpDecider, signUpStream } from '../../domain/signup/signup.decider.js';
import type { AccountCommands } from '../accounts/account-commands.js';
import type { ApiKeySecretsPort } from '../accounts/api-key-secrets.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import { awaitOutcome } from '../shared/await-outcome.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import type { MailerPort } from './mailer.port.js';
import type { OtpPort } from './otp.port.js';

export interface SignUpThrottleQueries {
  recentByEmail(email: string, since: Date): Promise<{ count: number; oldest: Date | null }>;
  recentByClient(clientAddress: string, since: Date): Promise<{ count: number; oldest: Date | null }>;
}

export type SignUpLimits = Readonly<{ perEmailPerHour: number; perClientPerHour: number; provisioningTimeoutMs: number }>;

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
 * Self-service sign-up (docs/accounts.md, "Sign-up"), with its own stream (`signup-<verificationId>`).
 *
 * request: append SignUpRequested (only the code's hash), then e-mail the code. The code is never stored, so the
 * request that made it is the only place that can send it.
 * verify: the decider checks the code and records SignUpVerified with a plan — every id (account, agent, number,
 * key) chosen up front. The sign-up process (SignUpProcess) provisions it step by step, each step idempotent by
 * those ids; verify awaits the outcome and answers with the key. A refused step leaves a pending account nobody
 * can use; the person's retried verify or the recovery scheduler asks the process to run the steps again. A
 * retried verify never creates a second account: the plan is fixed by the first successful verify.
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
    private readonly limits: SignUpLimits,
  ) {}

  /** Sign-up streams belong to no account yet: their events are recorded under the `signup` pseudo-account. */
  private run(verificationId: string, cmd: CommandInput<SignUpCommand>, ctx: RequestContext) {
    return this.exec.execute(signUpDecider, signUpStream(verificationId), cmd, ctx, { accountId: 'signup', readYourWrites: true });
  }

  private async throttle(email: string, clientAddress: string | null): Promise<void> {
    const now = new Date(this.exec.now());
    const since = new Date(now.getTime() - 3600_000);
    const checks: [Promise<{ count: number; oldest: Date | null }>, number][] = [
      [this.throttles.recentByEmail(email, since), this.limits.perEmailPerHour],
    ];
    if (clientAddress) checks.push([this.throttles.recentByClient(clientAddress, since), this.limits.perClientPerHour]);
    for (const [q, limit] of checks) {
      const { count, oldest } = await q;
      if (count >= limit) {
        const retryAfterSeconds = Math.max(1, Math.ceil(((oldest?.getTime() ?? now.getTime()) + 3600_000 - now.getTime()) / 1000));
        throw new DomainError('THROTTLED', `Too many sign-up requests. Retry in ${retryAfterSeconds} seconds.`, undefined, {
          retryAfterSeconds,
        });
      }
    }
  }

  async request(ctx: RequestContext, o: { email: string; agentName: string | null; clientAddress: string | null }) {
    const email = o.email.trim().toLowerCase();
    this.mailer.ready?.(); // no way to send the code: refused before anything is recorded
    await this.throttle(email, o.clientAddress);
    const verificationId = this.ids.id('ver');
    const code = this.otp.generate();
    await this.run(
      verificationId,
      {
        type: 'RequestSignUp',
        data: {
          verificationId,
          email,
          agentName: o.agentName,
          codeHash: this.otp.hash(verificationId, code),
          clientAddress: o.clientAddress,
        },
      },
      ctx,
    );
    // the code exists only here and in the e-mail: it leaves the process after the request is recorded
    await this.mailer.send({
      to: email,
      subject: `Your verification code: ${code}`,
      text: `Your verification code is ${code}. It expires in 10 minutes.\n\nIf you did not ask to sign up, ignore this e-mail.`,
    });
    return { verification_id: verificationId, expires_in_seconds: 600, message: `We sent a 6-digit code to ${email}.` };
  }

  async verify(ctx: RequestContext, o: { verificationId: string; code: string; source: string | null }): Promise<VerifiedSignUp> {
    const stream = signUpStream(o.verificationId);
    const codeHash = this.otp.hash(o.verificationId, o.code);
    const key = this.secrets.generate();
    const plan: SignUpPlan = {
      userId: this.ids.id('usr'),
      projectId: this.ids.id('prj'),
      accountId: this.ids.id('acc'),
      agentId: this.ids.id('agt'),
      numberId: this.ids.id('pn'),
      keyId: this.ids.id('key'),
      keyPrefix: key.prefix,
      keyHash: key.hash,
    };
    const r = await this.run(
      o.verificationId,
      { type: 'VerifySignUp', data: { verificationId: o.verificationId, codeHash, source: o.source, plan } },
      ctx,
    );
    if (r.events[0]?.type === 'SignUpCodeRejected') {
      const left = Math.max(0, 5 - r.events[0].data.wrongTries);
      throw new DomainError('SIGNUP_CODE_INVALID', `Wrong code; ${left} ${left === 1 ? 'try' : 'tries'} left`);
    }
    const state = r.state as SignUpState;
    if (state.status !== 'verified' && state.status !== 'completed') throw new DomainError('SIGNUP_NOT_FOUND', 'Unknown verification_id');
    if (r.events[0]?.type === 'SignUpVerified') {
      // the first verify: the sign-up process provisions the plan; this request answers with the key it chose
      await this.provisioned(o.verificationId, r.revision);
      await this.run(o.verificationId, { type: 'RecordKeyDelivered', data: { verificationId: o.verificationId } }, ctx);
      return {
        api_key: key.key,
        ...(await this.summary(state.plan)),
        message: 'Account ready. Save the API key now: it is shown only once.',
      };
    }
    // a retried verify: only someone who has the code may resume it
    const { events } = await this.exec.load(signUpDecider, stream);
    const requested = events.find((e) => e.type === 'SignUpRequested');
    if (requested?.type !== 'SignUpRequested' || requested.data.codeHash !== codeHash) {
      throw new DomainError('SIGNUP_CODE_INVALID', 'Wrong code');
    }
    if (state.status === 'verified') {
      const retry = await this.run(o.verificationId, { type: 'RetrySignUp', data: { verificationId: o.verificationId } }, ctx);
      await this.provisioned(o.verificationId, retry.revision);
    }
    if (state.keyDelivered) {
      return {
        api_key: null,
        ...(await this.summary(state.plan)),
        message: 'This sign-up was already completed; its API key was returned by the first verify.',
      };
    }
    // the verify that fixed the plan never answered (a crash, a provider failure): its key never reached the
    // person, so this verify (with the right code) hands out a replacement key
    const apiKey = await this.accounts.replaceKey(ctx, state.plan.accountId, state.plan.keyId);
    await this.run(
      o.verificationId,
      { type: 'RecordKeyReplaced', data: { verificationId: o.verificationId, keyId: state.plan.keyId } },
      ctx,
    );
    return { api_key: apiKey, ...(await this.summary(state.plan)), message: 'Account ready. Save the API key now: it is shown only once.' };
  }

  /**
   * Awaits what the sign-up process made of the sign-up after `revision`: completed (returns), a refused step
   * (throws its error: the sign-up stays verified and a retried verify resumes it), or failed for good.
   */
  private async provisioned(verificationId: string, revision: bigint | 'no_stream'): Promise<void> {
    const after = revision === 'no_stream' ? -1n : revision;
    const outcome = await awaitOutcome(
      this.exec,
      signUpDecider,
      signUpStream(verificationId),
      (s, events) => s.status !== 'verified' || events.some((e) => e.streamRevision > after && e.type === 'SignUpStepFailed'),
      this.limits.provisioningTimeoutMs,
    );
    await this.exec.settle(outcome.events);
    const s = outcome.state;
    if (s.status === 'completed') return;
    if (s.status === 'failed') throw new DomainError('SIGNUP_FAILED', `This sign-up failed (${s.reason}); start again with a new sign-up`);
    const refused = outcome.events.findLast((e) => e.streamRevision > after && e.type === 'SignUpStepFailed');
    if (refused?.type === 'SignUpStepFailed') throw new DomainError(refused.data.code, refused.data.message);
    throw new DomainError('READ_MODEL_TIMEOUT', 'Your account is still being set up; verify again with the same code in a minute');
  }

  /** What verify answers about the plan: its ids and the number it got. */
  private async summary(p: SignUpPlan): Promise<Omit<VerifiedSignUp, 'api_key' | 'message'>> {
    const { state: n } = await this.exec.state(phoneNumberDecider, phoneNumberStream(p.numberId));
    const phoneNumber = n.status === 'active' || n.status === 'released' ? n.phoneNumber : null;
    return {
      account_id: p.accountId,
      user_id: p.userId,
      project_id: p.projectId,
      agent_id: p.agentId,
      number_id: p.numberId,
      phone_number: phoneNumber,
    };
  }

  /**
   * Recovery of a stalled sign-up (no progress for a while): asks the sign-up process to run the steps again, or
   * gives up once `maxFailures` attempts in a row have failed. Returns what it recorded.
   */
  async recover(ctx: RequestContext, verificationId: string, maxFailures: number): Promise<'retried' | 'failed' | 'nothing'> {
    const { state: s, events } = await this.exec.load(signUpDecider, signUpStream(verificationId));
    if (s.status !== 'verified') return 'nothing';
    if (s.failures >= maxFailures) {
      const last = events.findLast((e) => e.type === 'SignUpStepFailed');
      await this.run(
        verificationId,
        {
          type: 'FailSignUp',
          data: { verificationId, reason: last?.type === 'SignUpStepFailed' ? last.data.message : 'provisioning did not finish' },
        },
        ctx,
      );
      return 'failed';
    }
    await this.run(verificationId, { type: 'RetrySignUp', data: { verificationId } }, ctx);
    return 'retried';
  }
}

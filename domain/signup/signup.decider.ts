import { DomainError, type ErrorCode } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/** The stream of a sign-up by a one-time code (its verification): `<category>-<id>` (docs/event-store.md#aggregates-and-events). */
export const signUpStream = (verificationId: string) => `signup-${verificationId}`;

export const CODE_TTL_SECONDS = 600;
export const MAX_WRONG_CODES = 5;

/** Everything verify provisions, with ids chosen before the first step so every step can be repeated safely. */
export type SignUpPlan = Readonly<{
  userId: string;
  projectId: string;
  accountId: string;
  agentId: string;
  numberId: string;
  keyId: string;
  keyPrefix: string;
  keyHash: string;
}>;

export type SignUpCommand =
  | Command<
      'RequestSignUp',
      { verificationId: string; email: string; agentName: string | null; codeHash: string; clientAddress: string | null }
    >
  /** `codeHash` is the hash of the code the person typed; `plan` is used only if this verify succeeds first. */
  | Command<'VerifySignUp', { verificationId: string; codeHash: string; source: string | null; plan: SignUpPlan }>
  /** `keyDelivered`: the completing request hands the key to the person (false when the sign-up process completes it) */
  | Command<'CompleteSignUp', { verificationId: string; keyDelivered: boolean }>
  /** A provisioning step failed for now (a provider refused); the sign-up stays verified and may be retried. */
  | Command<'RecordStepFailed', { verificationId: string; code: ErrorCode; message: string }>
  /** Run the provisioning steps again (the person retried verify, or recovery found it stalled). */
  | Command<'RetrySignUp', { verificationId: string }>
  /** The verify that chose the key answered with it once provisioning completed. */
  | Command<'RecordKeyDelivered', { verificationId: string }>
  /** A retried verify of a sign-up whose key never reached the person: a replacement key was issued. */
  | Command<'RecordKeyReplaced', { verificationId: string; keyId: string }>
  | Command<'FailSignUp', { verificationId: string; reason: string }>;

export type SignUpEvent =
  | Event<
      'SignUpRequested',
      {
        verificationId: string;
        email: string;
        agentName: string | null;
        codeHash: string;
        clientAddress: string | null;
        expiresAt: string;
        requestedAt: string;
      }
    >
  | Event<'SignUpCodeRejected', { verificationId: string; wrongTries: number; rejectedAt: string }>
  | Event<
      'SignUpVerified',
      { verificationId: string; email: string; agentName: string | null; source: string | null; plan: SignUpPlan; verifiedAt: string }
    >
  | Event<'SignUpCompleted', { verificationId: string; accountId: string; keyDelivered: boolean; completedAt: string }>
  | Event<'SignUpKeyReplaced', { verificationId: string; keyId: string; replacedAt: string }>
  | Event<'SignUpStepFailed', { verificationId: string; code: ErrorCode; message: string; failures: number; failedAt: string }>
  | Event<'SignUpRetryRequested', { verificationId: string; failures: number; requestedAt: string }>
  | Event<'SignUpKeyDelivered', { verificationId: string; deliveredAt: string }>
  | Event<'SignUpFailed', { verificationId: string; reason: string; failedAt: string }>;

export const signUpEventTypes = [
  'SignUpRequested',
  'SignUpCodeRejected',
  'SignUpVerified',
  'SignUpCompleted',
  'SignUpKeyReplaced',
  'SignUpFailed',
  'SignUpStepFailed',
  'SignUpRetryRequested',
  'SignUpKeyDelivered',
] as const satisfies readonly SignUpEvent['type'][];

export type SignUpState =
  | { status: 'none' }
  | { status: 'pending'; email: string; agentName: string | null; codeHash: string; expiresAt: string; wrongTries: number }
  /** `failures`: provisioning attempts that failed in a row (recovery gives up after a few) */
  | { status: 'verified' | 'completed'; email: string; agentName: string | null; plan: SignUpPlan; keyDelivered: boolean; failures: number }
  | { status: 'failed'; reason: string };

const notFound = () => new DomainError('SIGNUP_NOT_FOUND', 'Unknown verification_id');

export const signUpDecider: Decider<SignUpCommand, SignUpEvent, SignUpState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    switch (cmd.type) {
      case 'RequestSignUp': {
        if (s.status !== 'none') return [];
        const expiresAt = new Date(Date.parse(now) + CODE_TTL_SECONDS * 1000).toISOString();
        return [{ type: 'SignUpRequested', data: { ...cmd.data, expiresAt, requestedAt: now } }];
      }
      case 'VerifySignUp':
        switch (s.status) {
          case 'none':
            throw notFound();
          case 'failed':
            throw new DomainError('SIGNUP_FAILED', `This sign-up failed (${s.reason}); start again with a new sign-up`);
          case 'verified':
          case 'completed':
            return []; // a retried verify: the provisioning plan already exists, nothing new is created
          case 'pending': {
            if (s.wrongTries >= MAX_WRONG_CODES)
              throw new DomainError('SIGNUP_LOCKED', 'Too many wrong codes; start again with a new sign-up');
            if (Date.parse(now) > Date.parse(s.expiresAt))
              throw new DomainError('SIGNUP_CODE_EXPIRED', 'The code has expired; request a new one');
            if (cmd.data.codeHash !== s.codeHash) {
              return [
                {
                  type: 'SignUpCodeRejected',
                  data: { verificationId: cmd.data.verificationId, wrongTries: s.wrongTries + 1, rejectedAt: now },
                },
              ];
            }
            return [
              {
                type: 'SignUpVerified',
                data: {
                  verificationId: cmd.data.verificationId,
                  email: s.email,
                  agentName: s.agentName,
                  source: cmd.data.source,
                  plan: cmd.data.plan,
                  verifiedAt: now,
                },
              },
            ];
          }
          default:
            return assertNever(s);
        }
      case 'CompleteSignUp':
        if (s.status === 'completed') return [];
        if (s.status !== 'verified') throw new DomainError('SIGNUP_NOT_FOUND', 'Sign-up is not verified');
        return [
          {
            type: 'SignUpCompleted',
            data: {
              verificationId: cmd.data.verificationId,
              accountId: s.plan.accountId,
              keyDelivered: cmd.data.keyDelivered,
              completedAt: now,
            },
          },
        ];
      case 'RecordKeyReplaced':
        if (s.status !== 'completed' && s.status !== 'verified') throw new DomainError('SIGNUP_NOT_FOUND', 'Sign-up is not verified');
        return [{ type: 'SignUpKeyReplaced', data: { verificationId: cmd.data.verificationId, keyId: cmd.data.keyId, replacedAt: now } }];
      case 'RecordStepFailed':
        if (s.status !== 'verified') return [];
        return [
          {
            type: 'SignUpStepFailed',
            data: {
              verificationId: cmd.data.verificationId,
              code: cmd.data.code,
              message: cmd.data.message,
              failures: s.failures + 1,
              failedAt: now,
            },
          },
        ];
      case 'RetrySignUp':
        if (s.status !== 'verified') return [];
        return [
          { type: 'SignUpRetryRequested', data: { verificationId: cmd.data.verificationId, failures: s.failures, requestedAt: now } },
        ];
      case 'RecordKeyDelivered':
        if ((s.status !== 'completed' && s.status !== 'verified') || s.keyDelivered) return [];
        return [{ type: 'SignUpKeyDelivered', data: { verificationId: cmd.data.verificationId, deliveredAt: now } }];
      case 'FailSignUp':
        if (s.status === 'failed' || s.status === 'completed') return [];
        return [{ type: 'SignUpFailed', data: { verificationId: cmd.data.verificationId, reason: cmd.data.reason, failedAt: now } }];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'SignUpRequested':
        return {
          status: 'pending',
          email: e.data.email,
          agentName: e.data.agentName,
          codeHash: e.data.codeHash,
          expiresAt: e.data.expiresAt,
          wrongTries: 0,
        };
      case 'SignUpCodeRejected':
        return s.status === 'pending' ? { ...s, wrongTries: e.data.wrongTries } : s;
      case 'SignUpVerified':
        return {
          status: 'verified',
          email: e.data.email,
          agentName: e.data.agentName,
          plan: e.data.plan,
          keyDelivered: false,
          failures: 0,
        };
      case 'SignUpCompleted':
        return s.status === 'verified' ? { ...s, status: 'completed', keyDelivered: e.data.keyDelivered } : s;
      case 'SignUpKeyReplaced':
      case 'SignUpKeyDelivered':
        return s.status === 'verified' || s.status === 'completed' ? { ...s, keyDelivered: true } : s;
      case 'SignUpStepFailed':
        return s.status === 'verified' ? { ...s, failures: e.data.failures } : s;
      case 'SignUpRetryRequested':
        return s;
      case 'SignUpFailed':
        return { status: 'failed', reason: e.data.reason };
      default:
        return assertNever(e);
    }
  },
};

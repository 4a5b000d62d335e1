import { SignUpProcess } from '../../application/signup/signup-process.js';
import { SignUpService } from '../../application/signup/signup-service.js';
import type { SignUpErrorCode } from '../../domain/signup/errors.js';
import { KyselySignUpQueries } from '../../projections/signup/signup.queries.js';
import { signupsProjector } from '../../projections/signup/signups.projector.js';
import { ACCOUNTS } from '../accounts/tokens.js';
import { RandomOtp } from '../adapters/otp.js';
import { secretKeys } from '../adapters/secret-keys.js';
import { AGENTS } from '../agents/tokens.js';
import type { Capability } from '../capabilities/capability.js';
import * as m006 from '../db/migrations/006-signups.js';
import { httpError } from '../http/errors.js';
import { NUMBERS } from '../numbers/tokens.js';
import { PLATFORM } from '../platform/tokens.js';
import { SmtpMailer, UnconfiguredMailer } from '../providers/smtp-mailer.js';
import { OutboxMailer } from '../sandbox/mail/outbox-mailer.js';
import { signUpRoutes } from './signup.routes.js';
import { SignUpRecoveryWorker } from './signup-recovery.worker.js';
import { SIGNUP } from './tokens.js';

/**
 * Self-service sign-up by a one-time code (docs/accounts.md): the mailer (SMTP when SMTP_URL is set, else the
 * sandbox kit's outbox), codes, the sign-up process that provisions a verified plan, and the recovery scheduler.
 */
export const signUp = {
  name: 'signup',
  bind: (b, cfg) => {
    // live mode has no mailbox of its own: without SMTP_URL no mail is sent and sign-up answers 503 (docs/accounts.md)
    if (cfg.SMTP_URL) b.value(SIGNUP.Mailer, new SmtpMailer(cfg.SMTP_URL, cfg.MAIL_FROM));
    else if (cfg.PROVIDER_MODE === 'sandbox') b.toClass(SIGNUP.Mailer, OutboxMailer);
    else b.value(SIGNUP.Mailer, new UnconfiguredMailer());
    b.value(SIGNUP.Otp, new RandomOtp(secretKeys(cfg.SECRETS_KEY).signUpCodes));
    b.factory(SIGNUP.Queries, (r) => new KyselySignUpQueries(r(PLATFORM.ReadDb)));
    b.alias(SIGNUP.NumberProvisioning, NUMBERS.Commands);
    b.factory(
      SIGNUP.Service,
      (r) =>
        new SignUpService(
          r(PLATFORM.Executor),
          r(PLATFORM.Ids),
          r(SIGNUP.Otp),
          r(PLATFORM.ApiKeySecrets),
          r(SIGNUP.Mailer),
          r(SIGNUP.Queries),
          r(ACCOUNTS.Commands),
          {
            perEmailPerHour: cfg.SIGNUP_MAX_PER_EMAIL_PER_HOUR,
            perClientPerHour: cfg.SIGNUP_MAX_PER_CLIENT_PER_HOUR,
            // the number's own wait, plus the account and agent steps before it
            provisioningTimeoutMs: cfg.NUMBER_PROVISIONING_TIMEOUT_MS + 10_000,
          },
        ),
    );
  },
  routes: {
    public: (api, r) => signUpRoutes(api, { signUp: r(SIGNUP.Service) }),
  },
  projectors: [signupsProjector],
  reactors: (r) => [
    new SignUpProcess(r(PLATFORM.Executor), r(ACCOUNTS.Commands), r(AGENTS.Commands), r(SIGNUP.NumberProvisioning), r(PLATFORM.Logger)),
  ],
  workers: (r) => [
    new SignUpRecoveryWorker(r(SIGNUP.Service), r(SIGNUP.Queries), r(PLATFORM.Clock), r(PLATFORM.Logger), {
      intervalMs: 5_000,
      staleAfterMs: 30_000,
      maxTries: 5,
    }),
  ],
  migrations: { '006-signups': m006 },
  errors: {
    SIGNUP_NOT_FOUND: { ...httpError.notFound, fix: 'Check verification_id, or start again with POST /v0/agent/sign-up.' },
    SIGNUP_CODE_INVALID: { ...httpError.invalidRequest, fix: 'Check otp_code against the e-mail and retry.' },
    SIGNUP_CODE_EXPIRED: httpError.invalidRequest,
    SIGNUP_LOCKED: httpError.rateLimited,
    SIGNUP_FAILED: { ...httpError.conflict, fix: 'Start again with POST /v0/agent/sign-up.' },
    EMAIL_NOT_CONFIGURED: {
      ...httpError.unavailable,
      fix: 'Set SMTP_URL (and MAIL_FROM) on the server, or run it with PROVIDER_MODE=sandbox.',
    },
  } satisfies Record<SignUpErrorCode, unknown>,
} as const satisfies Capability;

import type { Container } from 'inversify';
import type { Kysely } from 'kysely';
import type { AccountCommands } from '../application/accounts/account-commands.js';
import type { AgentCommands } from '../application/agents/agent-commands.js';
import type { ClockPort } from '../application/ports/clock.port.js';
import type { LoggerPort } from '../application/ports/logger.port.js';
import type { MailerPort } from '../application/ports/mailer.port.js';
import type { OtpPort } from '../application/ports/otp.port.js';
import { TOKENS } from '../application/ports/tokens.js';
import { SignUpService } from '../application/signup/signup-service.js';
import { KyselySignUpQueries, type SignUpQueries } from '../projections/queries/signup.queries.js';
import type { ReadDb } from '../projections/shared/read-db.js';
import { RandomOtp } from './adapters/otp.js';
import { secretKeys } from './adapters/secret-keys.js';
import type { Config } from './config/config.js';
import { sandboxOutboxRoutes, signUpRoutes } from './http/routes/signup.routes.js';
import { sandboxGuard } from './http/routes/sandbox-telecom.routes.js';
import type { RouteModule } from './http/routes/index.js';
import { OutboxMailer } from './providers/outbox-mailer.js';
import { SmtpMailer } from './providers/smtp-mailer.js';
import type { WorkerModule } from './workers.js';
import { SignUpRecoveryWorker } from './workers/signup-recovery.worker.js';

/** Sign-up: the mailer (SMTP when SMTP_URL is set, else the sandbox outbox), codes, the process and its recovery. */
export function bindSignUp(c: Container, cfg: Config, readDb: Kysely<ReadDb>): void {
  if (cfg.SMTP_URL) c.bind<MailerPort>(TOKENS.Mailer).toConstantValue(new SmtpMailer(cfg.SMTP_URL, cfg.MAIL_FROM));
  else c.bind<MailerPort>(TOKENS.Mailer).to(OutboxMailer);
  c.bind<OtpPort>(TOKENS.Otp).toConstantValue(new RandomOtp(secretKeys(cfg.SECRETS_KEY).signUpCodes));
  c.bind<SignUpQueries>(TOKENS.SignUpQueries).toConstantValue(new KyselySignUpQueries(readDb));
  c.bind(TOKENS.SignUpService).toResolvedValue(
    (store, ids, clock, otp, secrets, mailer, readModels, queries, accounts, agents, numbers, log) =>
      new SignUpService(store, ids, clock, otp, secrets, mailer, readModels, queries, accounts as AccountCommands, agents as AgentCommands, numbers,
        { perEmailPerHour: cfg.SIGNUP_MAX_PER_EMAIL_PER_HOUR, perClientPerHour: cfg.SIGNUP_MAX_PER_CLIENT_PER_HOUR }, log),
    [TOKENS.EventStore, TOKENS.Ids, TOKENS.Clock, TOKENS.Otp, TOKENS.ApiKeySecrets, TOKENS.Mailer, TOKENS.ReadModels, TOKENS.SignUpQueries,
      TOKENS.AccountCommands, TOKENS.AgentCommands, TOKENS.NumberProvisioning, TOKENS.Logger] as never);
}

export const signUpRouteModules: readonly RouteModule[] = [
  (api, c) => signUpRoutes(api, { signUp: c.get<SignUpService>(TOKENS.SignUpService) }),
  (api, c) => {
    const cfg = c.get<Config>(TOKENS.Config);
    if (cfg.PROVIDER_MODE !== 'sandbox' || cfg.SMTP_URL) return; // the outbox exists only when mail stays local
    api.router.use('/sandbox/outbox', sandboxGuard(cfg.ADMIN_TOKEN));
    sandboxOutboxRoutes(api, { queries: c.get<SignUpQueries>(TOKENS.SignUpQueries) });
  },
];

export const signUpWorkerModule: WorkerModule = (c) => new SignUpRecoveryWorker(
  c.get<SignUpService>(TOKENS.SignUpService), c.get<SignUpQueries>(TOKENS.SignUpQueries), c.get<ClockPort>(TOKENS.Clock), c.get<LoggerPort>(TOKENS.Logger),
  { intervalMs: 5_000, staleAfterMs: 30_000, maxTries: 5 },
);

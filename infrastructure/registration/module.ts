import { createHash } from 'node:crypto';
import { Registrations } from '../../application/registration/registrations.js';
import { SandboxRegistrationReview } from '../../application/registration/sandbox-review.js';
import type { RegistrationErrorCode } from '../../domain/registration/errors.js';
import { KyselyRegistrationQueries } from '../../projections/registration/registration.queries.js';
import { registrationsProjector } from '../../projections/registration/registrations.projector.js';
import { ACCOUNTS } from '../accounts/tokens.js';
import type { Capability } from '../capabilities/capability.js';
import * as m050 from '../db/migrations/050-registrations.js';
import { httpError } from '../http/errors.js';
import { PLATFORM } from '../platform/tokens.js';
import { registrationRoutes, sandboxRegistrationRoutes } from './registration.routes.js';
import { SandboxRegistrationReviewWorker } from './sandbox-review.worker.js';
import { REGISTRATION } from './tokens.js';

/** A registration's content, hashed: 128 bits of SHA-256 name a request well enough to find its retry. */
const fingerprint = (content: string) => createHash('sha256').update(content).digest('hex').slice(0, 32);

/**
 * US A2P 10DLC registration (docs/registration.md): submitting with the fee, the status that covers an account
 * (bound as the RegistrationStatusPort messaging asks), and in sandbox mode the review that approves a
 * registration SANDBOX_REGISTRATION_APPROVAL_SECONDS after it was submitted. In live mode there is no provider
 * yet: registrations stay pending.
 */
export const registration = {
  name: 'registration',
  bind: (b, cfg) => {
    b.factory(
      REGISTRATION.Registrations,
      (r) => new Registrations(r(PLATFORM.Executor), r(PLATFORM.Ids), r(ACCOUNTS.Billing), r(ACCOUNTS.Commands), fingerprint),
    );
    b.alias(REGISTRATION.Status, REGISTRATION.Registrations);
    b.factory(REGISTRATION.Queries, (r) => new KyselyRegistrationQueries(r(PLATFORM.ReadDb)));
    b.factory(
      REGISTRATION.SandboxReview,
      (r) =>
        new SandboxRegistrationReview(r(PLATFORM.Executor), r(REGISTRATION.Queries), r(REGISTRATION.Registrations), {
          approvalSeconds: cfg.SANDBOX_REGISTRATION_APPROVAL_SECONDS,
        }),
    );
  },
  routes: {
    v1: (api, r) => registrationRoutes(api, { registrations: r(REGISTRATION.Registrations) }),
    public: (api, r) => {
      if (r(PLATFORM.Config).PROVIDER_MODE === 'sandbox') sandboxRegistrationRoutes(api, { registrations: r(REGISTRATION.Registrations) });
    },
  },
  projectors: [registrationsProjector],
  workers: (r, cfg) =>
    cfg.PROVIDER_MODE === 'sandbox'
      ? [new SandboxRegistrationReviewWorker(r(REGISTRATION.SandboxReview), r(PLATFORM.Logger), { intervalMs: 1000 })]
      : [],
  migrations: { '050-registrations': m050 },
  errors: {
    REGISTRATION_IN_REVIEW: {
      ...httpError.conflict,
      fix: 'Wait for the review (GET /v1/register/status); a rejected registration can be submitted again.',
    },
    REGISTRATION_ALREADY_APPROVED: { ...httpError.conflict, fix: 'The account is registered already: GET /v1/register/status.' },
    REGISTRATION_NOT_FOUND: { ...httpError.notFound, fix: 'Submit a registration first: POST /v1/register.' },
  } satisfies Record<RegistrationErrorCode, unknown>,
} as const satisfies Capability;

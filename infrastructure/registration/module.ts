import { createHash } from 'node:crypto';
import { Registrations } from '../../application/registration/registrations.js';
import type { RegistrationErrorCode } from '../../domain/registration/errors.js';
import { KyselyRegistrationQueries } from '../../projections/registration/registration.queries.js';
import { registrationsProjector } from '../../projections/registration/registrations.projector.js';
import { ACCOUNTS } from '../accounts/tokens.js';
import type { Capability } from '../capabilities/capability.js';
import * as m050 from '../db/migrations/050-registrations.js';
import { httpError } from '../http/errors.js';
import { PLATFORM } from '../platform/tokens.js';
import { registrationRoutes } from './registration.routes.js';
import { registrationReviewRoutes } from './review.routes.js';
import { REGISTRATION } from './tokens.js';

/** A registration's content, hashed: 128 bits of SHA-256 name a request well enough to find its retry. */
const fingerprint = (content: string) => createHash('sha256').update(content).digest('hex').slice(0, 32);

/**
 * US A2P 10DLC registration (docs/registration.md): submitting with the fee, the status that covers an account
 * (bound as the RegistrationStatusPort messaging asks). In sandbox mode the sandbox kit's review approves a
 * registration SANDBOX_REGISTRATION_APPROVAL_SECONDS after it was submitted; live, the carrier reviews it and the
 * operator records the decision through the operator API.
 */
export const registration = {
  name: 'registration',
  bind: (b) => {
    b.factory(
      REGISTRATION.Registrations,
      (r) => new Registrations(r(PLATFORM.Executor), r(PLATFORM.Ids), r(ACCOUNTS.Billing), r(ACCOUNTS.Commands), fingerprint),
    );
    b.alias(REGISTRATION.Status, REGISTRATION.Registrations);
    b.factory(REGISTRATION.Queries, (r) => new KyselyRegistrationQueries(r(PLATFORM.ReadDb)));
  },
  routes: {
    v1: (api, r) => registrationRoutes(api, { registrations: r(REGISTRATION.Registrations) }),
    // live, the carrier reviews a registration and the operator records its decision here (docs/registration.md#review)
    admin: (api, r) =>
      registrationReviewRoutes(api, {
        registrations: r(REGISTRATION.Registrations),
        base: '/admin',
        tag: 'admin',
        actor: 'admin',
        summaries: {
          approve: "Record that the carrier approved the account's pending 10DLC registration (brand and campaign): its US texts may go",
          reject: "Record that the carrier rejected the account's pending 10DLC registration, with its reason (it may be submitted again)",
        },
        defaultReason: 'Rejected by the carrier',
      }),
  },
  projectors: [registrationsProjector],
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

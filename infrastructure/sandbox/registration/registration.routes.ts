import type { Registrations } from '../../../application/registration/registrations.js';
import type { Api } from '../../http/api.js';
import { registrationReviewRoutes } from '../../registration/review.routes.js';
import { SANDBOX_TAG } from '../shared/http.js';

/** The sandbox review's controls (mounted only with PROVIDER_MODE=sandbox; /sandbox needs the admin token). */
export function sandboxRegistrationRoutes(api: Api, { registrations }: { registrations: Registrations }): void {
  registrationReviewRoutes(api, {
    registrations,
    base: '/sandbox',
    tag: SANDBOX_TAG,
    actor: 'sandbox',
    summaries: {
      reject: "Reject the account's pending registration, as a carrier review would (it may then be submitted again)",
      approve: "Approve the account's pending registration now, without waiting for the review delay",
    },
    defaultReason: 'Rejected by the sandbox review',
  });
}

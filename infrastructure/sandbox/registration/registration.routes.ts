import type { Registrations } from '../../../application/registration/registrations.js';
import type { RequestContext } from '../../../application/shared/context.js';
import type { Api } from '../../http/api.js';
import { z } from '../../http/openapi.js';
import { statusBody } from '../../registration/registration.routes.js';
import { CampaignStatusResponse } from '../../registration/registration.schemas.js';
import { sandboxRoute } from '../shared/http.js';

/** The sandbox review's controls (mounted only with PROVIDER_MODE=sandbox; /sandbox needs the admin token). */
export function sandboxRegistrationRoutes(api: Api, { registrations }: { registrations: Registrations }): void {
  const params = z.object({ account_id: z.string().min(1).max(64) });
  const operator = (requestId: string): RequestContext => ({ accountId: 'sandbox', requestId, correlationId: requestId, actor: 'sandbox' });

  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/registrations/:account_id/reject',
    summary: "Reject the account's pending registration, as a carrier review would (it may then be submitted again)",
    params,
    body: z.object({ reason: z.string().trim().min(1).max(500).default('Rejected by the sandbox review') }),
    response: CampaignStatusResponse,
    errors: [404],
    handler: async ({ params, body, ctx }) =>
      statusBody(await registrations.reject(operator(ctx.correlationId), params.account_id, body.reason)),
  });

  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/registrations/:account_id/approve',
    summary: "Approve the account's pending registration now, without waiting for the review delay",
    params,
    response: CampaignStatusResponse,
    errors: [404],
    handler: async ({ params, ctx }) => statusBody(await registrations.approveNow(operator(ctx.correlationId), params.account_id)),
  });
}

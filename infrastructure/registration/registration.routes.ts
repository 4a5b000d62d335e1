import type { Registrations } from '../../application/registration/registrations.js';
import type { RequestContext } from '../../application/shared/context.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { CampaignStatusResponse, RegistrationRequest, RegistrationResponse, toDetails } from './registration.schemas.js';

const statusBody = (v: Awaited<ReturnType<Registrations['view']>>) => ({
  campaign_status: v.campaignStatus,
  message: v.message,
  stage: v.stage,
});

/** /v1/register and /v1/register/status (docs/registration.md). */
export function registrationRoutes(api: Api, { registrations }: { registrations: Registrations }): void {
  const tag = 'registration';

  api.route({
    method: 'post',
    path: '/v1/register',
    tag,
    summary:
      'Submit a US A2P 10DLC registration ($25.00, charged once to the master account); by default for a new sub-account opened for it',
    body: RegistrationRequest,
    paid: true,
    response: RegistrationResponse,
    errors: [402, 403, 409],
    handler: async ({ body, ctx }) => {
      const r = await registrations.register(ctx, toDetails(body), { createSubAccount: body.create_sub_account });
      return { ok: r.ok, message: r.message, campaign_status: r.campaignStatus, sub_account_id: r.subAccountId, fee_cents: r.feeCents };
    },
  });

  api.route({
    method: 'get',
    path: '/v1/register/status',
    tag,
    summary: "The registration covering the account (a sub-account's own, else its master's): none, pending, approved or rejected",
    response: CampaignStatusResponse,
    handler: async ({ ctx }) => statusBody(await registrations.view(ctx.accountId)),
  });
}

/** The sandbox review's controls (mounted only with PROVIDER_MODE=sandbox; /sandbox needs the admin token). */
export function sandboxRegistrationRoutes(api: Api, { registrations }: { registrations: Registrations }): void {
  const tag = 'sandbox';
  const params = z.object({ account_id: z.string().min(1).max(64) });
  const operator = (requestId: string): RequestContext => ({ accountId: 'sandbox', requestId, correlationId: requestId, actor: 'sandbox' });

  api.route({
    method: 'post',
    path: '/sandbox/registrations/:account_id/reject',
    tag,
    auth: false,
    summary: "Reject the account's pending registration, as a carrier review would (it may then be submitted again)",
    params,
    body: z.object({ reason: z.string().trim().min(1).max(500).default('Rejected by the sandbox review') }),
    response: CampaignStatusResponse,
    errors: [401, 403, 404],
    handler: async ({ params, body, ctx }) =>
      statusBody(await registrations.reject(operator(ctx.correlationId), params.account_id, body.reason)),
  });

  api.route({
    method: 'post',
    path: '/sandbox/registrations/:account_id/approve',
    tag,
    auth: false,
    summary: "Approve the account's pending registration now, without waiting for the review delay",
    params,
    response: CampaignStatusResponse,
    errors: [401, 403, 404],
    handler: async ({ params, ctx }) => statusBody(await registrations.approveNow(operator(ctx.correlationId), params.account_id)),
  });
}

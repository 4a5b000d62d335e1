import type { Registrations } from '../../application/registration/registrations.js';
import type { Api } from '../http/api.js';
import { CampaignStatusResponse, RegistrationRequest, RegistrationResponse, toDetails } from './registration.schemas.js';

/** The status answer of a registration (also the sandbox review's answers). */
export const statusBody = (v: Awaited<ReturnType<Registrations['view']>>) => ({
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

import type { Registrations } from '../../application/registration/registrations.js';
import type { RequestContext } from '../../application/shared/context.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { statusBody } from './registration.routes.js';
import { CampaignStatusResponse } from './registration.schemas.js';

/**
 * Deciding an account's pending 10DLC registration from outside the API's accounts (docs/registration.md#review):
 * the operator recording the carrier's decision (`/admin/registrations/…`, live mode), or the sandbox's control API
 * (`/sandbox/registrations/…`). Both paths are behind the admin token.
 */
export function registrationReviewRoutes(
  api: Api,
  d: {
    registrations: Registrations;
    base: '/admin' | '/sandbox';
    tag: string;
    /** who decides, in the events' metadata */
    actor: string;
    /** what the approval and rejection do, for the API document */
    summaries: { approve: string; reject: string };
    defaultReason: string;
  },
): void {
  const params = z.object({ account_id: z.string().min(1).max(64) });
  const decider = (requestId: string): RequestContext => ({ accountId: d.actor, requestId, correlationId: requestId, actor: d.actor });

  api.route({
    method: 'post',
    path: `${d.base}/registrations/:account_id/reject`,
    tag: d.tag,
    auth: false,
    summary: d.summaries.reject,
    params,
    body: z.object({ reason: z.string().trim().min(1).max(500).default(d.defaultReason) }),
    response: CampaignStatusResponse,
    errors: [401, 403, 404],
    handler: async ({ params, body, ctx }) =>
      statusBody(await d.registrations.reject(decider(ctx.correlationId), params.account_id, body.reason)),
  });

  api.route({
    method: 'post',
    path: `${d.base}/registrations/:account_id/approve`,
    tag: d.tag,
    auth: false,
    summary: d.summaries.approve,
    params,
    response: CampaignStatusResponse,
    errors: [401, 403, 404],
    handler: async ({ params, ctx }) => statusBody(await d.registrations.approveNow(decider(ctx.correlationId), params.account_id)),
  });
}

import type { HistoryService } from '../../application/audit/history.js';
import type { HistoryRoute } from '../capabilities/capability.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { HistoryQuery, historyResponse } from './audit.schemas.js';

const at = (q: { at?: string | undefined }) => (q.at ? new Date(q.at).toISOString() : null);

/**
 * The audit histories (docs/audit.md): every event of the resource's stream, or the record as of `?at=`, for each
 * resource a capability contributes (`histories` of its module).
 */
export function auditRoutes(api: Api, deps: { history: HistoryService; routes: readonly HistoryRoute[] }): void {
  const tag = 'audit';
  const description = 'every event of its stream in order, with who did it, the request and cause, and the status after each step';
  const response = historyResponse(deps.routes.map((h) => h.view.kind));
  for (const h of deps.routes)
    api.route({
      method: 'get',
      path: h.path,
      tag,
      summary: `The history of ${h.what}: ${description}`,
      params: z.object({
        [h.param]: z
          .string()
          .min(1)
          .max(h.idMax ?? 100),
      }),
      query: HistoryQuery,
      response,
      errors: [404],
      handler: ({ params, query, ctx }) => deps.history.history(ctx.accountId, h.view.kind, String(params[h.param]), at(query)),
    });
}

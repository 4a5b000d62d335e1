import type { NumberCallQueries } from '../../application/calls/call-queries.port.js';
import type { NumberQueries } from '../../application/numbers/number-queries.port.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { offsetQuery, toOffsetPage } from '../http/pagination.js';
import { NumberIdParams } from '../numbers/number.schemas.js';

export const CallSummary = z
  .object({
    id: z.string(),
    agentId: z.string().nullable(),
    phoneNumberId: z.string().nullable(),
    phoneNumber: z.string().nullable(),
    fromNumber: z.string(),
    toNumber: z.string(),
    direction: z.string(),
    status: z.string(),
    startedAt: z.string(),
    endedAt: z.string().nullable(),
    durationSeconds: z.number().int().nullable(),
    lastTranscriptSnippet: z.string().nullable(),
  })
  .openapi('CallSummary');
export const CallListResponse = z
  .object({ data: z.array(CallSummary), hasMore: z.boolean(), total: z.number().int() })
  .openapi('CallListResponse');

/** A number's call history (docs/numbers.md). */
export function callRoutes(api: Api, { calls, numbers }: { calls: NumberCallQueries; numbers: NumberQueries }): void {
  api.route({
    method: 'get',
    path: '/v1/numbers/:number_id/calls',
    tag: 'calls',
    summary: "The number's calls, newest first",
    params: NumberIdParams,
    query: offsetQuery(),
    response: CallListResponse,
    errors: [404],
    handler: async ({ params, query, ctx }) => {
      if (!(await numbers.get(ctx.accountId, params.number_id))) throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
      return toOffsetPage(await calls.calls(ctx.accountId, params.number_id, query), query);
    },
  });
}

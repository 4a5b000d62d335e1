import type { NumberCommands } from '../../application/numbers/number-commands.js';
import type { NumberLookup } from '../../application/numbers/number-lookup.js';
import type { NumberQueries } from '../../application/numbers/number-queries.port.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { offsetQuery, toOffsetPage } from '../http/pagination.js';
import {
  AgentNumberParams,
  AttachNumberRequest,
  AttachNumberResponse,
  CreateNumberRequest,
  DeleteNumberResponse,
  LookupQuery,
  NumberIdParams,
  NumberLookupResponse,
  PhoneNumberListResponse,
  PhoneNumberResponse,
  UpdateNumberRequest,
} from './number.schemas.js';

/** /v1/numbers (docs/numbers.md#provisioning) and attaching numbers to agents (docs/numbers.md#attach-and-detach). */
export function numberRoutes(
  api: Api,
  { commands, queries, lookup }: { commands: NumberCommands; queries: NumberQueries; lookup: NumberLookup },
): void {
  const tag = 'numbers';
  const requireNumber = async (accountId: string, numberId: string) => {
    const n = await queries.get(accountId, numberId);
    if (!n) throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
    return n;
  };

  api.route({
    method: 'post',
    path: '/v1/numbers',
    tag,
    summary: 'Provision an SMS-enabled number: limit (409), balance of $3.00 (402), search, purchase, routing, first month charged',
    body: CreateNumberRequest,
    paid: true,
    response: PhoneNumberResponse,
    errors: [402, 404, 409, 502, 503],
    handler: ({ body, ctx }) => commands.provisionNumber(ctx, body),
  });

  api.route({
    method: 'get',
    path: '/v1/numbers',
    tag,
    summary: 'List the active numbers (released ones are excluded)',
    query: offsetQuery(),
    response: PhoneNumberListResponse,
    handler: async ({ query, ctx }) => toOffsetPage(await queries.list(ctx.accountId, query), query),
  });

  api.route({
    method: 'get',
    path: '/v1/numbers/lookup',
    tag,
    summary: 'Line type, country, carrier and RCS support of up to 25 numbers ($0.009 per number looked up)',
    query: LookupQuery,
    paid: true,
    response: NumberLookupResponse,
    errors: [402, 502],
    handler: ({ query, ctx }) => lookup.lookup(ctx, query.phoneNumbers),
  });

  api.route({
    method: 'get',
    path: '/v1/numbers/:number_id',
    tag,
    summary: 'Get a number, whatever its status (released included)',
    params: NumberIdParams,
    response: PhoneNumberResponse,
    errors: [404],
    handler: ({ params, ctx }) => requireNumber(ctx.accountId, params.number_id),
  });

  api.route({
    method: 'patch',
    path: '/v1/numbers/:number_id',
    tag,
    summary: "Route the number's calls to a SIP trunk (null stops it)",
    params: NumberIdParams,
    body: UpdateNumberRequest,
    response: PhoneNumberResponse,
    errors: [404, 409],
    handler: async ({ params, body, ctx }) =>
      body.sipTrunkId === undefined
        ? requireNumber(ctx.accountId, params.number_id)
        : commands.assignSipTrunk(ctx, params.number_id, body.sipTrunkId),
  });

  api.route({
    method: 'delete',
    path: '/v1/numbers/:number_id',
    tag,
    summary: 'Release a number: released upstream, status `released`, detached from its agent; history kept; irreversible',
    params: NumberIdParams,
    response: DeleteNumberResponse,
    errors: [404, 502, 503],
    handler: ({ params, ctx }) => commands.release(ctx, params.number_id),
  });

  api.route({
    method: 'post',
    path: '/v1/agents/:agent_id/numbers',
    tag: 'agents',
    summary: 'Attach a number of the account to an agent; a number held by another agent moves to this one',
    params: z.object({ agent_id: z.string().min(1).max(64) }),
    body: AttachNumberRequest,
    response: AttachNumberResponse,
    errors: [404, 409],
    handler: ({ params, body, ctx }) => commands.attach(ctx, params.agent_id, body.numberId),
  });

  api.route({
    method: 'delete',
    path: '/v1/agents/:agent_id/numbers/:number_id',
    tag: 'agents',
    summary: 'Detach a number from the agent; it stays active and can be attached again',
    params: AgentNumberParams,
    response: z.object({ success: z.boolean() }),
    errors: [404],
    handler: ({ params, ctx }) => commands.detach(ctx, params.agent_id, params.number_id),
  });
}

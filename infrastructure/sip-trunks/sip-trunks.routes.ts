import type { SipTrunkCommands } from '../../application/sip-trunks/sip-trunk-commands.js';
import type { SipTrunkQueries, SipTrunkView } from '../../application/sip-trunks/sip-trunk-queries.port.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Api } from '../http/api.js';
import { offsetQuery, toOffsetPage } from '../http/pagination.js';
import {
  CreateSipTrunkRequest,
  SipTrunkDeleteResponse,
  SipTrunkListResponse,
  SipTrunkResponse,
  TrunkIdParams,
  UpdateSipTrunkRequest,
} from '../numbers/number.schemas.js';

const wire = (t: SipTrunkView) => ({
  id: t.id,
  name: t.name,
  transfers: t.transfers,
  transfer_caller_id: t.transferCallerId,
  origination: { uris: t.uris.map((u) => ({ sip_uri: u.sipUri, name: u.name, priority: u.priority, weight: u.weight })) },
  termination: {
    sip_uri: t.terminationUri,
    credentials: t.termination.usernames.map((username) => ({ username })),
    addresses: [...t.termination.addresses],
  },
  number_ids: [...t.numberIds],
  created_at: t.createdAt,
  updated_at: t.updatedAt,
});

/** /v1/sip-trunks (docs/numbers.md#sip-trunks). */
export function sipTrunkRoutes(api: Api, { commands, queries }: { commands: SipTrunkCommands; queries: SipTrunkQueries }): void {
  const tag = 'sip-trunks';

  api.route({
    method: 'get',
    path: '/v1/sip-trunks',
    tag,
    summary: 'List SIP trunks',
    query: offsetQuery(),
    response: SipTrunkListResponse,
    handler: async ({ query, ctx }) => {
      const page = await queries.list(ctx.accountId, query);
      return toOffsetPage({ data: page.data.map(wire), total: page.total }, query);
    },
  });
  api.route({
    method: 'post',
    path: '/v1/sip-trunks',
    tag,
    summary: 'Create a SIP trunk (all fields optional)',
    body: CreateSipTrunkRequest,
    response: SipTrunkResponse,
    errors: [502],
    handler: async ({ body, ctx }) => wire(await commands.create(ctx, body)),
  });
  api.route({
    method: 'get',
    path: '/v1/sip-trunks/:trunk_id',
    tag,
    summary: 'Get a SIP trunk',
    params: TrunkIdParams,
    response: SipTrunkResponse,
    errors: [404],
    handler: async ({ params, ctx }) => {
      const t = await queries.get(ctx.accountId, params.trunk_id);
      if (!t) throw new DomainError('SIP_TRUNK_NOT_FOUND', 'SIP trunk not found');
      return wire(t);
    },
  });
  api.route({
    method: 'patch',
    path: '/v1/sip-trunks/:trunk_id',
    tag,
    summary:
      'Update a SIP trunk: send only changes; `origination` with empty or omitted `uris` clears them (409 while numbers are attached)',
    params: TrunkIdParams,
    body: UpdateSipTrunkRequest,
    response: SipTrunkResponse,
    errors: [404, 409, 502],
    handler: async ({ params, body, ctx }) => wire(await commands.update(ctx, params.trunk_id, body)),
  });
  api.route({
    method: 'delete',
    path: '/v1/sip-trunks/:trunk_id',
    tag,
    summary: 'Delete a SIP trunk upstream and soft-delete it here; its numbers stop routing to it',
    params: TrunkIdParams,
    response: SipTrunkDeleteResponse,
    errors: [404, 502],
    handler: ({ params, ctx }) => commands.delete(ctx, params.trunk_id),
  });
}

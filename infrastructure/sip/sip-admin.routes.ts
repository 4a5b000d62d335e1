import type { Carriers } from '../../application/carriers/carriers.js';
import type { NumberImports } from '../../application/numbers/number-imports.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { PhoneNumberResponse } from '../numbers/number.schemas.js';
import { CarrierInput, CarrierPatch, carrierChangesOf, newCarrierOf } from './carriers.js';

const ImportNumberBody = z
  .object({
    phoneNumber: z.string().regex(/^\+[1-9]\d{7,14}$/, 'an E.164 number, such as +14155550100'),
    country: z.enum(['US', 'CA']).default('US'),
    carrierId: z.string().min(1).max(63),
    agentId: z.string().min(1).nullish(),
  })
  .openapi('AdminImportNumberRequest');

const CarrierView = z
  .object({
    id: z.string(),
    name: z.string(),
    source: z.enum(['api', 'configuration']),
    inbound: z.object({ addresses: z.array(z.string()), username: z.string().nullable(), hasPassword: z.boolean() }),
    outbound: z
      .object({
        host: z.string(),
        port: z.number().int(),
        transport: z.enum(['udp', 'tcp']),
        username: z.string().nullable(),
        hasPassword: z.boolean(),
        register: z.boolean(),
        registerExpiresSeconds: z.number().int(),
      })
      .nullable(),
    numberFormat: z.object({ plus: z.boolean(), prefix: z.string(), defaultCountryCode: z.string() }),
    createdAt: z.string().nullable(),
    updatedAt: z.string().nullable(),
  })
  .openapi('AdminCarrier');

const CarrierParams = z.object({ carrier_id: z.string().min(1).max(63) });

/**
 * The operator's SIP routes (docs/sip.md#carriers): the carriers (passwords are taken, sealed, and never shown) and
 * number imports.
 */
export function sipAdminRoutes(api: Api, d: { carriers: Carriers; imports: NumberImports }): void {
  const tag = 'admin';
  api.route({
    method: 'get',
    path: '/admin/carriers',
    tag,
    summary: 'The carriers the SIP engine takes calls from and dials through (passwords are never shown)',
    auth: false,
    response: z.object({ data: z.array(CarrierView) }),
    handler: async () => ({ data: await d.carriers.list() }),
  });
  api.route({
    method: 'post',
    path: '/admin/carriers',
    tag,
    summary: 'Add a carrier: its inbound gateways, its outbound gateway, how it writes numbers',
    auth: false,
    body: CarrierInput,
    errors: [409],
    response: CarrierView,
    handler: async ({ body, ctx }) => d.carriers.create(ctx, newCarrierOf(body)),
  });
  api.route({
    method: 'get',
    path: '/admin/carriers/:carrier_id',
    tag,
    summary: 'One carrier',
    auth: false,
    params: CarrierParams,
    errors: [404],
    response: CarrierView,
    handler: async ({ params }) => d.carriers.get(params.carrier_id),
  });
  api.route({
    method: 'patch',
    path: '/admin/carriers/:carrier_id',
    tag,
    summary:
      'Change a carrier: each section given replaces the stored one (a password left out is kept); the SIP engine takes it up within seconds',
    auth: false,
    params: CarrierParams,
    body: CarrierPatch,
    errors: [404, 409],
    response: CarrierView,
    handler: async ({ params, body, ctx }) => d.carriers.change(ctx, params.carrier_id, carrierChangesOf(body)),
  });
  api.route({
    method: 'delete',
    path: '/admin/carriers/:carrier_id',
    tag,
    summary: 'Delete a carrier that no active number was imported with',
    auth: false,
    params: CarrierParams,
    errors: [404, 409],
    status: 204,
    response: z.undefined(),
    handler: async ({ params, ctx }) => {
      await d.carriers.remove(ctx, params.carrier_id);
    },
  });
  api.route({
    method: 'post',
    path: '/admin/accounts/:account_id/numbers/import',
    tag,
    summary: 'Bring a number the operator holds at a carrier into an account (imported, not bought)',
    auth: false,
    params: z.object({ account_id: z.string().min(1) }),
    body: ImportNumberBody,
    errors: [404, 409],
    response: PhoneNumberResponse,
    handler: async ({ params, body, ctx }) =>
      d.imports.import(ctx, {
        accountId: params.account_id,
        phoneNumber: body.phoneNumber,
        country: body.country,
        carrierId: body.carrierId,
        agentId: body.agentId ?? null,
      }),
  });
}

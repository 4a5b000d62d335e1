import type { NumberImports } from '../../application/numbers/number-imports.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { PhoneNumberResponse } from '../numbers/number.schemas.js';
import type { CarrierDirectory } from './carriers.js';

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
    inbound: z.object({ addresses: z.array(z.string()), digestUser: z.string().nullable() }),
    outbound: z
      .object({
        host: z.string(),
        port: z.number().int(),
        transport: z.enum(['udp', 'tcp']),
        digestUser: z.string().nullable(),
        register: z.boolean(),
      })
      .nullable(),
    numberFormat: z.object({ plus: z.boolean(), prefix: z.string(), defaultCountryCode: z.string() }),
  })
  .openapi('AdminCarrier');

/** The operator's SIP routes (docs/sip.md#carriers): the carriers (never their passwords) and number imports. */
export function sipAdminRoutes(api: Api, d: { carriers: CarrierDirectory; imports: NumberImports }): void {
  const tag = 'admin';
  api.route({
    method: 'get',
    path: '/admin/carriers',
    tag,
    summary: 'The carriers the SIP engine takes calls from and dials through (passwords are never shown)',
    auth: false,
    response: z.object({ data: z.array(CarrierView) }),
    handler: async () => ({
      data: (await d.carriers.list()).map((c) => ({
        id: c.id,
        name: c.name,
        inbound: { addresses: [...c.inbound.addresses], digestUser: c.inbound.username },
        outbound: c.outbound
          ? {
              host: c.outbound.host,
              port: c.outbound.port,
              transport: c.outbound.transport,
              digestUser: c.outbound.username,
              register: c.outbound.register,
            }
          : null,
        numberFormat: c.numberFormat,
      })),
    }),
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

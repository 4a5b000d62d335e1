import { AREA_CODES } from '../../domain/phone-number/north-american-area-codes.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { LOOKUP_RULES, type SandboxCarrier } from '../providers/sandbox/sandbox-carrier.js';
import { FAULT_ERRORS, FAULT_OPERATIONS, type SandboxFaults } from '../providers/sandbox/sandbox-faults.js';

const Fault = z
  .object({
    id: z.string(),
    operation: z.string(),
    error: z.string().nullable(),
    delayMs: z.number().int(),
    afterEffect: z.boolean(),
    remaining: z.number().int(),
    createdAt: z.string(),
  })
  .openapi('SandboxFault');

/**
 * The sandbox control API of the carrier (mounted only with PROVIDER_MODE=sandbox): inventory and purchases as
 * the carrier sees them, the lookup rules, and injected faults (which the sandbox SIP provider obeys too).
 */
export function sandboxTelecomRoutes(api: Api, { carrier, faults }: { carrier: SandboxCarrier; faults: SandboxFaults }): void {
  const tag = 'sandbox';

  api.route({
    method: 'get',
    path: '/sandbox/carrier/inventory/:area_code',
    tag,
    auth: false,
    summary: "An area code's sandbox inventory: available, purchased, quarantined",
    params: z.object({ area_code: z.string().regex(/^\d{3}$/) }),
    errors: [401, 403],
    response: z.object({
      areaCode: z.string(),
      country: z.string(),
      regions: z.array(z.string()),
      numbers: z.array(
        z.object({ phoneNumber: z.string(), status: z.string(), availableAt: z.string().nullable(), purchaseKey: z.string().nullable() }),
      ),
    }),
    handler: async ({ params }) => {
      const info = AREA_CODES.get(params.area_code);
      if (!info)
        throw new DomainError('VALIDATION_ERROR', `${params.area_code} is not an area code of the US or Canada`, [
          { field: 'area_code', message: 'unknown area code', type: 'value_error' },
        ]);
      return {
        areaCode: info.areaCode,
        country: info.country,
        regions: [...info.regions],
        numbers: await carrier.inventory(info.areaCode),
      };
    },
  });
  api.route({
    method: 'get',
    path: '/sandbox/carrier/purchases',
    tag,
    auth: false,
    summary: 'Numbers the sandbox carrier has sold and not had back (with their idempotency keys)',
    errors: [401, 403],
    response: z.object({
      data: z.array(
        z.object({
          phoneNumber: z.string(),
          purchaseKey: z.string().nullable(),
          accountId: z.string().nullable(),
          purchasedAt: z.string().nullable(),
          messagingUrl: z.string().nullable(),
          voiceUrl: z.string().nullable(),
        }),
      ),
    }),
    handler: async () => ({ data: await carrier.purchases() }),
  });
  api.route({
    method: 'get',
    path: '/sandbox/carrier/lookup-rules',
    tag,
    auth: false,
    summary: 'How the sandbox answers line-type lookups (by the last digit)',
    errors: [401, 403],
    response: z.object({
      rules: z.array(
        z.object({ lastDigits: z.string(), lineType: z.string(), carrierName: z.string().nullable(), rcsSupported: z.boolean() }),
      ),
      special: z.array(z.string()),
    }),
    handler: async () => ({
      rules: LOOKUP_RULES.map((r) => ({
        lastDigits: r.digits,
        lineType: r.lineType,
        carrierName: r.carrierName,
        rcsSupported: r.rcsSupported,
      })),
      special: [
        '+1 800/833/844/855/866/877/888: toll-free',
        '+1 900: premium',
        '+1 with an area code not in service, or an unknown country code: valid=false, lineType unknown',
      ],
    }),
  });
  api.route({
    method: 'get',
    path: '/sandbox/faults',
    tag,
    auth: false,
    summary: 'Pending injected upstream faults',
    errors: [401, 403],
    response: z.object({ data: z.array(Fault) }),
    handler: async () => ({ data: await faults.list() }),
  });
  api.route({
    method: 'post',
    path: '/sandbox/faults',
    tag,
    auth: false,
    summary: 'Inject a fault: the next call(s) of an upstream operation fail (502) or are slow',
    errors: [401, 403],
    body: z
      .object({
        operation: z.enum(FAULT_OPERATIONS),
        error: z
          .enum(FAULT_ERRORS)
          .optional()
          .openapi({ description: "default: the operation's provider error, unless only delayMs is given" }),
        delayMs: z.number().int().min(0).max(600_000).optional(),
        afterEffect: z.boolean().optional().openapi({ description: 'the operation takes effect upstream before it fails or answers late' }),
        times: z.number().int().min(1).max(1000).optional(),
      })
      .openapi('SandboxFaultRequest'),
    response: Fault,
    handler: ({ body }) => faults.add(body),
  });
  api.route({
    method: 'delete',
    path: '/sandbox/faults',
    tag,
    auth: false,
    summary: 'Remove every pending fault',
    errors: [401, 403],
    response: z.object({ removed: z.number().int() }),
    handler: async () => ({ removed: await faults.clear() }),
  });
}

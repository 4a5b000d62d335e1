import { AREA_CODES } from '../../../domain/phone-number/north-american-area-codes.js';
import { DomainError } from '../../../domain/shared/errors.js';
import type { Api } from '../../http/api.js';
import { z } from '../../http/openapi.js';
import { sandboxRoute } from '../shared/http.js';
import { LOOKUP_RULES, type SandboxCarrier } from './sandbox-carrier.js';

/**
 * The sandbox control API of the carrier (mounted only with PROVIDER_MODE=sandbox): inventory and purchases as
 * the carrier sees them, and the lookup rules.
 */
export function sandboxCarrierRoutes(api: Api, { carrier }: { carrier: SandboxCarrier }): void {
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/carrier/inventory/:area_code',
    summary: "An area code's sandbox inventory: available, purchased, quarantined",
    params: z.object({ area_code: z.string().regex(/^\d{3}$/) }),
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
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/carrier/purchases',
    summary: 'Numbers the sandbox carrier has sold and not had back (with their idempotency keys)',
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
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/carrier/lookup-rules',
    summary: 'How the sandbox answers line-type lookups (by the last digit)',
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
}

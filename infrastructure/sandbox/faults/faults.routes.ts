import type { Api } from '../../http/api.js';
import { z } from '../../http/openapi.js';
import { sandboxRoute } from '../shared/http.js';
import { FAULT_ERRORS, FAULT_OPERATIONS, type SandboxFaults } from './faults.js';

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

/** Injected faults of the sandbox upstreams (docs/sandbox.md#faults): the carrier and the SIP provider obey them. */
export function sandboxFaultRoutes(api: Api, { faults }: { faults: SandboxFaults }): void {
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/faults',
    summary: 'Pending injected upstream faults',
    response: z.object({ data: z.array(Fault) }),
    handler: async () => ({ data: await faults.list() }),
  });
  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/faults',
    summary: 'Inject a fault: the next call(s) of an upstream operation fail (502) or are slow',
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
  sandboxRoute(api, {
    method: 'delete',
    path: '/sandbox/faults',
    summary: 'Remove every pending fault',
    response: z.object({ removed: z.number().int() }),
    handler: async () => ({ removed: await faults.clear() }),
  });
}

import type { Api } from '../../http/api.js';
import { z } from '../../http/openapi.js';
import { sandboxRoute } from '../shared/http.js';
import { MAX_ADVANCE_SECONDS, type SandboxClock } from './clock.js';

const ClockState = z
  .object({
    now: z.string().openapi({ description: "the platform's time: the system clock plus the offset" }),
    offsetSeconds: z.number().int().openapi({ description: 'how far the sandbox clock is ahead of the system clock' }),
  })
  .openapi('SandboxClock');

/**
 * The sandbox clock's control API (mounted only with PROVIDER_MODE=sandbox, behind the admin token like every
 * /sandbox route): where the platform's time is, and moving it forward (docs/sandbox.md#sandbox-clock).
 */
export function sandboxClockRoutes(api: Api, { clock }: { clock: SandboxClock }): void {
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/clock',
    summary: "The sandbox clock: the platform's time and its offset from the system clock",
    response: ClockState,
    handler: async () => clock.refresh(),
  });
  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/clock',
    summary: 'Move the sandbox clock forward (never back): due retries, renewals and expiries follow it',
    body: z
      .object({
        advanceSeconds: z
          .number()
          .int()
          .min(1)
          .max(MAX_ADVANCE_SECONDS)
          .openapi({ description: `seconds to move forward, 1 to ${MAX_ADVANCE_SECONDS} (366 days) per call` }),
      })
      .openapi('SandboxClockAdvance'),
    response: ClockState,
    handler: ({ body }) => clock.advance(body.advanceSeconds),
  });
}

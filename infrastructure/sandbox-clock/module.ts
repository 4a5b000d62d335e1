import type { Capability } from '../capabilities/capability.js';
import * as m030 from '../db/migrations/030-sandbox-clock.js';
import { PLATFORM } from '../platform/tokens.js';
import { sandboxClockCommands } from './sandbox-clock.commands.js';
import { sandboxClockRoutes } from './sandbox-clock.routes.js';
import { SANDBOX_CLOCK } from './tokens.js';

/**
 * The sandbox clock (docs/sandbox.md#sandbox-clock): in sandbox mode the platform's Clock is the system clock
 * plus a stored offset that only grows (bound by the platform module, since every capability reads it). This
 * module owns its table, reads the offset before the process serves or works, keeps it fresh, and offers the
 * control API and CLI.
 */
export const sandboxClock = {
  name: 'sandbox-clock',
  start: async (r) => {
    if (r(PLATFORM.Config).PROVIDER_MODE === 'sandbox') await r(SANDBOX_CLOCK.Clock).start();
  },
  routes: {
    public: (api, r) => {
      if (r(PLATFORM.Config).PROVIDER_MODE === 'sandbox') sandboxClockRoutes(api, { clock: r(SANDBOX_CLOCK.Clock) });
    },
  },
  migrations: { '030-sandbox-clock': m030 },
  close: async (r) => {
    if (r(PLATFORM.Config).PROVIDER_MODE === 'sandbox') await r(SANDBOX_CLOCK.Clock).stop();
  },
  cli: sandboxClockCommands,
} as const satisfies Capability;

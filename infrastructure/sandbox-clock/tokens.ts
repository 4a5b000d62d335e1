import { token } from '../capabilities/token.js';
import type { SandboxClock } from './sandbox-clock.js';

/** The sandbox clock (bound by the platform module in sandbox mode only). */
export const SANDBOX_CLOCK = {
  Clock: token<SandboxClock>('SandboxClock'),
} as const;

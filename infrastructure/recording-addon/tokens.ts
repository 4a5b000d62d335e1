import type { RecordingAddOnCommands } from '../../application/recording-addon/recording-addon-commands.js';
import type { RecordingAddOnQueries } from '../../application/recording-addon/recording-addon-queries.port.js';
import type { RecordingAddOnRenewals } from '../../application/recording-addon/recording-addon-renewals.js';
import { token } from '../capabilities/token.js';

/**
 * The recording add-on's tokens (its module binds them). `Queries` is the port the calls capability asks when a
 * call is placed: `isActive(accountId, at)` (docs/recording-addon.md#for-the-calls-capability).
 */
export const RECORDING_ADDON = {
  Queries: token<RecordingAddOnQueries>('RecordingAddOnQueries'),
  Commands: token<RecordingAddOnCommands>('RecordingAddOnCommands'),
  Renewals: token<RecordingAddOnRenewals>('RecordingAddOnRenewals'),
} as const;

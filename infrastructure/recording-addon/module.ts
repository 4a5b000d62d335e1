import { RecordingAddOnCommands } from '../../application/recording-addon/recording-addon-commands.js';
import { RecordingAddOnRenewals } from '../../application/recording-addon/recording-addon-renewals.js';
import { recordingAddOnProjector } from '../../projections/recording-addon/recording-addon.projector.js';
import { KyselyRecordingAddOnQueries } from '../../projections/recording-addon/recording-addon.queries.js';
import { ACCOUNTS } from '../accounts/tokens.js';
import type { Capability } from '../capabilities/capability.js';
import * as m085 from '../db/migrations/085-recording-addon.js';
import { PLATFORM } from '../platform/tokens.js';
import { PassWorker } from '../workers.js';
import { recordingAddOnRoutes } from './recording-addon.routes.js';
import { RECORDING_ADDON } from './tokens.js';

/**
 * The call-recording add-on (docs/recording-addon.md): $5.00 per 30-day period, charged through Billing, renewed
 * by a job on the monthly renewal interval (NUMBER_RENEWAL_INTERVAL_MS); `RECORDING_ADDON.Queries` answers the
 * calls capability whether calls are recorded.
 */
export const recordingAddOn = {
  name: 'recording-addon',
  bind: (b) => {
    b.factory(RECORDING_ADDON.Queries, (r) => new KyselyRecordingAddOnQueries(r(PLATFORM.ReadDb)));
    b.factory(
      RECORDING_ADDON.Commands,
      (r) => new RecordingAddOnCommands(r(PLATFORM.Executor), r(ACCOUNTS.Billing), r(RECORDING_ADDON.Queries)),
    );
    b.factory(
      RECORDING_ADDON.Renewals,
      (r) => new RecordingAddOnRenewals(r(PLATFORM.Executor), r(ACCOUNTS.Billing), r(RECORDING_ADDON.Queries), r(PLATFORM.Logger)),
    );
  },
  routes: {
    // at the documented /credits/recording… paths, behind the API key like /v1 (infrastructure/http/app.ts)
    v1: (api, r) => recordingAddOnRoutes(api, { commands: r(RECORDING_ADDON.Commands) }),
  },
  projectors: [recordingAddOnProjector],
  workers: (r, cfg) => {
    // each pass renews, lets lapse or expires the add-ons whose period has ended by the Clock's now
    const renewals = r(RECORDING_ADDON.Renewals);
    return [
      new PassWorker('recording-addon-renewal', () => renewals.renewDue(), r(PLATFORM.Logger), {
        intervalMs: cfg.NUMBER_RENEWAL_INTERVAL_MS,
        logged: 'recording add-on renewals',
      }),
    ];
  },
  migrations: { '085-recording-addon': m085 },
} as const satisfies Capability;

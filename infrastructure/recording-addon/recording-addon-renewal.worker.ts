import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { RecordingAddOnRenewals } from '../../application/recording-addon/recording-addon-renewals.js';
import { IntervalWorker } from '../workers.js';

/** The add-on's renewal job: each pass renews, lets lapse or expires the add-ons whose period has ended by the Clock's now. */
export class RecordingAddOnRenewalWorker extends IntervalWorker {
  readonly name = 'recording-addon-renewal';

  constructor(
    private readonly renewals: RecordingAddOnRenewals,
    log: LoggerPort,
    o: { intervalMs: number },
  ) {
    super(log, o.intervalMs);
  }

  async runOnce() {
    const r = await this.renewals.renewDue();
    if (r.renewed || r.lapsed || r.expired) this.log.info(r, 'recording add-on renewals');
    return r;
  }
}

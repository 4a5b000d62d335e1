import type { NumberRenewals } from '../../application/numbers/number-renewals.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { IntervalWorker } from '../workers.js';

/** The monthly renewal job: each pass charges the numbers whose paid month has ended by the Clock's now. */
export class NumberRenewalWorker extends IntervalWorker {
  readonly name = 'number-renewal';

  constructor(
    private readonly renewals: NumberRenewals,
    log: LoggerPort,
    o: { intervalMs: number },
  ) {
    super(log, o.intervalMs);
  }

  async runOnce() {
    const r = await this.renewals.renewDue();
    if (r.renewed || r.paymentFailed) this.log.info(r, 'number renewals');
    return r;
  }
}

import type { LoggerPort } from '../../../application/ports/logger.port.js';
import type { SandboxRegistrationReview } from '../../../application/registration/sandbox-review.js';
import { IntervalWorker } from '../../workers.js';

/** Runs the sandbox registration review: each pass approves the registrations whose review delay has passed. */
export class SandboxRegistrationReviewWorker extends IntervalWorker {
  readonly name = 'sandbox-registration-review';

  constructor(
    private readonly review: SandboxRegistrationReview,
    log: LoggerPort,
    o: { intervalMs: number },
  ) {
    super(log, o.intervalMs);
  }

  async runOnce() {
    const r = await this.review.approveDue();
    if (r.approved) this.log.info(r, 'sandbox registrations approved');
    return r;
  }
}

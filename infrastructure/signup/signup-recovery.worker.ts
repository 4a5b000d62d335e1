import type { ClockPort } from '../../application/ports/clock.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { SignUpService } from '../../application/signup/signup-service.js';
import type { SignUpQueries } from '../../projections/signup/signup.queries.js';
import { IntervalWorker } from '../workers.js';

/**
 * Recovery of sign-ups whose provisioning stalled (a provider refused a step, or a process died): every
 * `intervalMs` it picks verified sign-ups untouched for `staleAfterMs` and records SignUpRetryRequested, which the
 * sign-up process acts on; once `maxTries` attempts in a row have failed it records SignUpFailed instead (the
 * pending account stays invisible and unbilled). It only records facts: the steps stay the process's.
 */
export class SignUpRecoveryWorker extends IntervalWorker<number> {
  readonly name = 'signup-recovery';

  constructor(
    private readonly signUp: SignUpService,
    private readonly queries: SignUpQueries,
    private readonly clock: ClockPort,
    log: LoggerPort,
    private readonly o: { intervalMs: number; staleAfterMs: number; maxTries: number },
  ) {
    super(log, o.intervalMs);
  }

  /** One pass; returns how many sign-ups it asked to retry. */
  async runOnce(): Promise<number> {
    const stalled = await this.queries.stalled(new Date(this.clock.now().getTime() - this.o.staleAfterMs), 20);
    let retried = 0;
    for (const id of stalled) {
      const ctx = { accountId: 'signup', requestId: null, correlationId: `recovery-${id}`, actor: 'system:signup-recovery' };
      try {
        const done = await this.signUp.recover(ctx, id, this.o.maxTries);
        if (done === 'retried') retried++;
        if (done === 'failed') this.log.warn({ verificationId: id }, 'sign-up given up after repeated provisioning failures');
      } catch (err) {
        this.log.warn({ err, verificationId: id }, 'sign-up recovery failed; will retry');
      }
    }
    return retried;
  }
}

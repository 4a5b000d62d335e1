import type { ClockPort } from '../../application/ports/clock.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { SignUpService } from '../../application/signup/signup-service.js';
import type { SignUpQueries } from '../../projections/queries/signup.queries.js';
import type { BackgroundWorker } from '../workers.js';

/**
 * Recovery of sign-ups whose provisioning stalled (a provider refused a step, or a process died): every
 * `intervalMs` it picks verified sign-ups untouched for `staleAfterMs` and records SignUpRetryRequested, which the
 * sign-up process acts on; once `maxTries` attempts in a row have failed it records SignUpFailed instead (the
 * pending account stays invisible and unbilled). It only records facts: the steps stay the process's.
 */
export class SignUpRecoveryWorker implements BackgroundWorker {
  readonly name = 'signup-recovery';
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly signUp: SignUpService,
    private readonly queries: SignUpQueries,
    private readonly clock: ClockPort,
    private readonly log: LoggerPort,
    private readonly o: { intervalMs: number; staleAfterMs: number; maxTries: number },
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    const tick = () => {
      this.running = this.runOnce()
        .catch((err: unknown) => this.log.error({ err }, 'sign-up recovery pass failed'))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.timer = setTimeout(tick, this.o.intervalMs);
        });
    };
    this.timer = setTimeout(tick, this.o.intervalMs);
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

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}

import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { SandboxRegistrationReview } from '../../application/registration/sandbox-review.js';
import type { BackgroundWorker } from '../workers.js';

/**
 * Runs the sandbox registration review every `intervalMs`. The interval only says how often to look; what is
 * due is the Clock's call, so tests (and the sandbox clock) move time and run a pass with `runOnce`.
 */
export class SandboxRegistrationReviewWorker implements BackgroundWorker {
  readonly name = 'sandbox-registration-review';
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = true;

  constructor(
    private readonly review: SandboxRegistrationReview,
    private readonly log: LoggerPort,
    private readonly o: { intervalMs: number },
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .catch((err: unknown) => this.log.error({ err }, 'sandbox registration review failed'))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.schedule();
        });
    }, this.o.intervalMs);
  }

  async runOnce() {
    const r = await this.review.approveDue();
    if (r.approved) this.log.info(r, 'sandbox registrations approved');
    return r;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}

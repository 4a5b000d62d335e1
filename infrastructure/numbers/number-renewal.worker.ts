import type { NumberRenewals } from '../../application/numbers/number-renewals.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { BackgroundWorker } from '../workers.js';

/**
 * The monthly renewal job: every `intervalMs` it asks NumberRenewals to charge the numbers whose paid month
 * has ended by the Clock's now. The interval only says how often to look; what is due is the Clock's call,
 * so tests move a test clock and run a pass (`runOnce`) instead of waiting.
 */
export class NumberRenewalWorker implements BackgroundWorker {
  readonly name = 'number-renewal';
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = true;

  constructor(
    private readonly renewals: NumberRenewals,
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
        .catch((err: unknown) => this.log.error({ err }, 'number renewal pass failed'))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.schedule();
        });
    }, this.o.intervalMs);
  }

  async runOnce() {
    const r = await this.renewals.renewDue();
    if (r.renewed || r.paymentFailed) this.log.info(r, 'number renewals');
    return r;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}

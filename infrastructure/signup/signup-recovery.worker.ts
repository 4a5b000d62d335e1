import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { ClockPort } from '../../application/ports/clock.port.js';
import type { SignUpService } from '../../application/signup/signup-service.js';
import type { SignUpQueries } from '../../projections/queries/signup.queries.js';
import type { BackgroundWorker } from '../workers.js';

/**
 * Finishes sign-ups whose verify was interrupted (a crash, a provider failure): every `intervalMs` it picks
 * verified sign-ups untouched for `staleAfterMs` and repeats their idempotent provisioning steps; after
 * `maxTries` failures it records SignUpFailed (the pending account stays invisible and unbilled).
 */
export class SignUpRecoveryWorker implements BackgroundWorker {
  readonly name = 'signup-recovery';
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private running: Promise<unknown> | null = null;
  private readonly failures = new Map<string, number>();

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

  /** One pass; returns how many sign-ups it completed. */
  async runOnce(): Promise<number> {
    const stalled = await this.queries.stalled(new Date(this.clock.now().getTime() - this.o.staleAfterMs), 20);
    let completed = 0;
    for (const id of stalled) {
      const ctx = { accountId: 'signup', requestId: null, correlationId: `recovery-${id}`, actor: 'system:signup-recovery' };
      try {
        await this.signUp.provision(ctx, id);
        this.failures.delete(id);
        completed++;
      } catch (err) {
        const n = (this.failures.get(id) ?? 0) + 1;
        this.failures.set(id, n);
        this.log.warn({ err, verificationId: id, tries: n }, 'sign-up provisioning failed; will retry');
        if (n >= this.o.maxTries) {
          await this.signUp.fail(ctx, id, err instanceof Error ? err.message : String(err));
          this.failures.delete(id);
        }
      }
    }
    return completed;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}

import type { LoggerPort } from '../application/ports/logger.port.js';

/** Something that runs in the background of a worker process: a reactor runner, a scheduler, a delivery worker. */
export interface BackgroundWorker {
  readonly name: string;
  start(): Promise<void>;
  /** finish the item in hand, then stop */
  stop(): Promise<void>;
}

/**
 * A worker that runs a pass every `intervalMs`, the next one timed from the end of the last, so passes never
 * overlap. The interval only says how often to look; what is due is the Clock's call, so tests move a test clock
 * and run a pass with `runOnce` instead of waiting. A failed pass is logged and the next one comes as usual.
 */
export abstract class IntervalWorker<R = unknown> implements BackgroundWorker {
  abstract readonly name: string;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = true;

  protected constructor(
    protected readonly log: LoggerPort,
    private readonly intervalMs: number,
  ) {}

  /** One pass over what is due now. */
  abstract runOnce(): Promise<R>;

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .catch((err: unknown) => this.log.error({ err }, `${this.name}: a pass failed`))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.schedule();
        });
    }, this.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}

/**
 * An IntervalWorker whose pass is one call to the application (renew what is due, approve what is due) answering what
 * it did as counts; a pass that did anything is logged with them under `logged`.
 */
export class PassWorker<R extends Readonly<Record<string, number>>> extends IntervalWorker<R> {
  constructor(
    readonly name: string,
    private readonly pass: () => Promise<R>,
    log: LoggerPort,
    private readonly o: Readonly<{ intervalMs: number; logged: string }>,
  ) {
    super(log, o.intervalMs);
  }

  async runOnce(): Promise<R> {
    const r = await this.pass();
    if (Object.values(r).some((n) => n > 0)) this.log.info(r, this.o.logged);
    return r;
  }
}

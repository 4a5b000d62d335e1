import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { ClockPort } from '../../application/ports/clock.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { AttemptHandoverPort, ClaimedAttempt, DueAttemptsPort, PreparedAttempt } from '../../application/webhooks/webhook.port.js';
import { AttemptNotRecordableError, type WebhookDeliverer } from '../../application/webhooks/webhook-deliverer.js';
import type { BackgroundWorker } from '../workers.js';

export type DeliveryWorkerOptions = Readonly<{
  /** attempts in flight at once in this worker */
  concurrency: number;
  /** how long a claim keeps other workers off an attempt; longer than any delivery deadline */
  leaseMs: number;
  /** how often to look for due attempts when nothing woke the worker */
  pollIntervalMs: number;
  /** on stop, in-flight requests get this long to finish before they are aborted (their claims then expire) */
  stopGraceMs?: number;
  workerId?: string;
  /**
   * Sets aside an attempt whose outcome cannot be recorded for good (`AttemptNotRecordableError`), instead of
   * sending it again at every claim expiry (docs/operations.md#isolated-work). Any other failure (a crash, the
   * database away) waits for the claim to expire, and the attempt is sent again.
   */
  isolate?: (claim: ClaimedAttempt, err: unknown) => Promise<void>;
}>;

/**
 * The delivery worker: claims due attempts (by the Clock port's time) from the retry timeline, sends each
 * outside any transaction, and lets the deliverer record the outcome. Any number of these may run, in one
 * process or many, against the same database. The dispatcher of its own process hands it first attempts as it
 * schedules them, claimed for it at scheduling (docs/webhooks.md#the-first-attempt-handed-over).
 */
export class WebhookDeliveryWorker implements BackgroundWorker, AttemptHandoverPort {
  readonly name = 'webhook-delivery';
  readonly workerId: string;
  private readonly inFlight = new Set<Promise<void>>();
  private abort = new AbortController();
  private running: Promise<void> | null = null;
  private stopped = true;
  private wakeUp: (() => void) | null = null;
  /** the last claim took as many as it asked for: more may be due */
  private full = false;
  private woken = false;
  /** free slots that make a finished attempt wake the loop for another claim */
  private readonly refillAt: number;
  /** slots set aside for first attempts being scheduled for this worker, not yet handed over */
  private reserved = 0;

  constructor(
    private readonly timeline: DueAttemptsPort,
    private readonly deliverer: WebhookDeliverer,
    private readonly clock: ClockPort,
    private readonly log: LoggerPort,
    private readonly o: DeliveryWorkerOptions,
  ) {
    // random, not the host's name and process id: a handed-over first attempt's claim is in the delivery's history,
    // which the account reads (docs/webhooks.md#the-first-attempt-handed-over)
    this.workerId = o.workerId ?? `wrk_${randomBytes(8).toString('hex')}`;
    this.refillAt = Math.max(1, Math.floor(o.concurrency / 4));
  }

  /** Look for due attempts now (new timeline rows, a moved test clock). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.abort = new AbortController();
    setMaxListeners(0, this.abort.signal); // one listener per request in flight
    this.running = this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const woken = this.woken;
      this.woken = false;
      let claimed: ClaimedAttempt[] = [];
      if (!this.mayRefill()) {
        // something may be due that there is no room for now (the slots may be full of handed-over attempts): a
        // finished attempt wakes the loop once enough slots are free
        if (woken) this.full = true;
        await this.sleep();
        continue;
      }
      const free = this.free();
      try {
        claimed = await this.claim(free);
      } catch (err) {
        if (this.stopped) break;
        this.log.error({ err }, 'claiming due webhook attempts failed');
      }
      // a claim that took fewer than it could took everything due: what comes due next wakes the loop (the
      // timeline's projector advancing, or the poll); one that filled its slots leaves more, claimed as slots free
      this.full = claimed.length === free;
      if (claimed.length > 0) this.track(claimed);
      await this.sleep();
    }
  }

  private free(): number {
    return this.o.concurrency - this.inFlight.size - this.reserved;
  }

  /** Whether to claim again: nothing in flight, or a quarter of the slots free (not one claim per finished send). */
  private mayRefill(): boolean {
    return (this.inFlight.size === 0 && this.reserved === 0) || this.free() >= this.refillAt;
  }

  reserve(wanted: number): ReturnType<AttemptHandoverPort['reserve']> {
    const count = this.stopped ? 0 : Math.min(wanted, this.free());
    // what it cannot take waits on the timeline: claim it as slots free
    if (count < wanted) this.full = true;
    if (count <= 0) return null;
    this.reserved += count;
    return { count, claim: { by: this.workerId, until: new Date(this.clock.now().getTime() + this.o.leaseMs).toISOString() } };
  }

  handOver(attempts: readonly PreparedAttempt[], reserved: number): void {
    this.reserved -= reserved;
    // stopping: the claims they were scheduled with expire, and the attempts are sent again
    if (this.stopped) return;
    for (const p of attempts) this.inFlightUntilDone(p.claim, this.deliverer.send(p, this.abort.signal));
  }

  private claim(limit: number): Promise<ClaimedAttempt[]> {
    return this.timeline.claim({ now: this.clock.now(), limit, workerId: this.workerId, leaseMs: this.o.leaseMs });
  }

  /** Sends a claimed batch: prepared together (one read), then each attempt on its own. */
  private track(claimed: readonly ClaimedAttempt[]): void {
    const prepared = this.deliverer.prepare(claimed);
    prepared.catch(() => undefined); // reported per attempt below
    claimed.forEach((c, i) => {
      this.inFlightUntilDone(
        c,
        prepared.then((ps) => this.deliverer.send(ps[i]!, this.abort.signal)),
      );
    });
  }

  /** Counts an attempt in flight until it is sent and recorded (or has failed). */
  private inFlightUntilDone(c: ClaimedAttempt, sending: Promise<unknown>): void {
    const p: Promise<void> = sending
      .then(
        () => undefined,
        (err: unknown) => this.failed(c, err),
      )
      .finally(() => {
        this.inFlight.delete(p);
        // docs/webhooks.md#how-deliveries-flow
        if (this.full && this.mayRefill()) this.wake();
      });
    this.inFlight.add(p);
  }

  /** An attempt that could not be sent or recorded: tried again when its claim expires, or isolated for good. */
  private async failed(c: ClaimedAttempt, err: unknown): Promise<void> {
    if (this.o.isolate && err instanceof AttemptNotRecordableError) {
      try {
        await this.o.isolate(c, err);
        return;
      } catch (isolateErr) {
        err = isolateErr;
      }
    }
    this.log.error({ err, deliveryId: c.deliveryId, attempt: c.attempt }, 'webhook attempt not recorded; retried when its claim expires');
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      if (this.woken || this.stopped) {
        resolve();
        return;
      }
      const t = setTimeout(done, this.o.pollIntervalMs);
      const self = this;
      function done() {
        clearTimeout(t);
        self.wakeUp = null;
        resolve();
      }
      this.wakeUp = done;
    });
  }

  /**
   * Claims and sends every attempt due now, waits for their outcomes, and returns how many were sent.
   * For tests and the bench; the background loop does the same continuously.
   */
  async runOnce(): Promise<number> {
    let n = 0;
    for (;;) {
      const claimed = await this.claim(this.o.concurrency);
      if (claimed.length === 0) return n;
      n += claimed.length;
      const prepared = await this.deliverer.prepare(claimed);
      await Promise.all(prepared.map((p) => this.deliverer.send(p).catch((err: unknown) => this.failed(p.claim, err))));
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.wakeUp?.();
    await this.running;
    if (this.inFlight.size > 0) {
      const grace = new Promise<void>((r) => {
        const t = setTimeout(r, this.o.stopGraceMs ?? 5000);
        t.unref();
      });
      await Promise.race([Promise.all(this.inFlight), grace]);
      this.abort.abort();
      await Promise.all(this.inFlight);
    }
  }
}

/**
 * The catch-up subscription to `$all` behind `EsdbEventStore.subscribe`: hands the handler batches in order,
 * says when the backlog is done (`caughtUp`), and resubscribes after a dropped connection from the last
 * checkpoint the handler finished, so that nothing is lost or handed over twice (see docs/event-store.md).
 * It knows nothing of connection strings: the adapter passes in how to open a client subscription and how to
 * ask whether anything is left after a checkpoint.
 */
import type { AllStreamResolvedEvent, AllStreamSubscription } from '@eventstore/db-client';
import {
  type Checkpoint,
  compareCheckpoints,
  type EventFilter,
  makeCheckpoint,
  type RecordedEvent,
  START,
  type Subscription,
  type SubscriptionHandler,
} from '../../../application/ports/event-store.port.js';
import { fromClient, toRecorded } from './event-mapping.js';
import { keep } from './filters.js';

const MAX_BACKOFF_MS = 5000;
const MAX_PROBE_MS = 5000;

/** A handler failure: ends the subscription (no resubscription), unlike a dropped connection. */
class HandlerFailed extends Error {
  constructor(readonly failure: unknown) {
    super('subscription handler failed');
  }
}

/** Pulls what a client subscription has buffered, and says when there is more, an end, or an error. */
class Pull {
  /** items handed out so far */
  received = 0;
  ended = false;
  private error: { err: unknown } | null = null;
  private waiter: (() => void) | null = null;

  constructor(private readonly s: AllStreamSubscription) {
    s.on('readable', this.poke);
    s.on('end', () => {
      this.ended = true;
      this.poke();
    });
    s.on('close', () => {
      this.ended = true;
      this.poke();
    });
    // stays attached for the life of the stream: a late error on an abandoned subscription must not go unhandled
    s.on('error', (err: unknown) => {
      this.error ??= { err };
      this.poke();
    });
  }

  readonly poke = (): void => {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  };

  take(max: number): AllStreamResolvedEvent[] {
    if (this.error) throw this.error.err;
    const out: AllStreamResolvedEvent[] = [];
    while (out.length < max) {
      const item = this.s.read() as AllStreamResolvedEvent | null;
      if (item === null) break;
      this.received++; // counted at once: `caughtUp` may fire inside read() (see consume)
      out.push(item);
    }
    return out;
  }

  changed(): Promise<void> {
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }
}

export type CatchUpDeps = Readonly<{
  open: (after: Checkpoint) => AllStreamSubscription;
  /** true when `readAll` finds nothing after the checkpoint (the fallback caught-up test) */
  nothingAfter: (after: Checkpoint) => Promise<boolean>;
  finished: (s: CatchUpSubscription) => void;
}>;

export type CatchUpOptions = Readonly<{
  after: Checkpoint;
  filter: EventFilter | undefined;
  batchSize: number;
  maxAttempts: number;
  baseDelayMs: number;
  probeMs: number;
  onError: ((err: unknown) => void) | undefined;
}>;

/**
 * A catch-up subscription to `$all` that survives dropped connections.
 *
 * `cursor` is the checkpoint of the last event the handler finished (or deliberately skipped); after a stream
 * error or an unexpected end it resubscribes from there (EventStoreDB subscription positions are exclusive), up
 * to `maxAttempts` failures in a row with doubling delays, then gives up through `onError`. Events at or before
 * the cursor are dropped on arrival, so a replayed event is never handed over twice.
 *
 * `caughtUp` resolves when the handler has finished every event the server sent before its `caught_up` message
 * (EventStoreDB 23.10+); for older servers, when the subscription idles and `readAll` finds nothing after the
 * cursor. Either way every event that existed when the subscription started has been handled.
 */
export class CatchUpSubscription implements Subscription {
  readonly caughtUp: Promise<void>;
  private resolveCaughtUp!: () => void;
  private rejectCaughtUp!: (err: unknown) => void;
  private isCaughtUp = false;
  private stopped = false;
  private cursor: Checkpoint;
  private failures = 0;
  private idle = false;
  private wake: (() => void) | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private probing: Promise<void> | null = null;
  private probeDelay: number;
  private readonly done: Promise<void>;

  constructor(
    private readonly deps: CatchUpDeps,
    private readonly o: CatchUpOptions,
    private readonly handler: SubscriptionHandler,
  ) {
    this.cursor = o.after;
    this.probeDelay = o.probeMs;
    this.caughtUp = new Promise<void>((resolve, reject) => {
      this.resolveCaughtUp = resolve;
      this.rejectCaughtUp = reject;
    });
    this.caughtUp.catch(() => undefined);
    this.done = this.run().finally(() => deps.finished(this));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clearProbe();
    this.wake?.();
    await this.done;
    await this.probing;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let sub: AllStreamSubscription | null = null;
      try {
        sub = this.deps.open(this.cursor);
        await this.consume(sub);
        return; // only when stopped
      } catch (err) {
        if (err instanceof HandlerFailed) {
          this.fail(err.failure);
          return;
        }
        if (this.stopped) return;
        this.failures++;
        if (this.failures > this.o.maxAttempts) {
          this.fail(err);
          return;
        }
        await this.sleep(Math.min(this.o.baseDelayMs * 2 ** (this.failures - 1), MAX_BACKOFF_MS));
      } finally {
        if (sub) await sub.unsubscribe().catch(() => undefined);
      }
    }
  }

  private async consume(sub: AllStreamSubscription): Promise<void> {
    const source = new Pull(sub);
    let processed = 0;
    let caughtUpAt: number | null = null;
    // Fires while the message passes the client's transform: the events before it were already handed out by
    // `take` or sit in the subscription's buffer, so they number `received + readableLength`.
    sub.on('caughtUp', () => {
      caughtUpAt = source.received + sub.readableLength;
      if (processed >= caughtUpAt) this.markCaughtUp();
    });
    sub.on('confirmation', () => {
      this.failures = 0;
    });
    for (;;) {
      const items = await this.take(source);
      if (items === null) {
        if (this.stopped) return;
        throw new Error('the $all subscription ended');
      }
      this.failures = 0;
      const batch: RecordedEvent[] = [];
      let last = this.cursor;
      for (const item of items) {
        if (!item.event) continue;
        const e = fromClient(item.event);
        const cp = makeCheckpoint(e.commit, e.prepare);
        if (last !== START && compareCheckpoints(cp, last) <= 0) continue; // handled before a reconnection
        last = cp;
        if (keep(this.o.filter, e)) batch.push(toRecorded(e));
      }
      if (batch.length > 0) {
        try {
          await this.handler(batch);
        } catch (err) {
          throw new HandlerFailed(err);
        }
      }
      this.cursor = last;
      processed += items.length;
      if (caughtUpAt !== null && processed >= caughtUpAt) this.markCaughtUp();
    }
  }

  /** Up to `batchSize` buffered items, waiting for at least one; null when stopped or the stream ended. */
  private async take(source: Pull): Promise<AllStreamResolvedEvent[] | null> {
    for (;;) {
      if (this.stopped) return null;
      const items = source.take(this.o.batchSize);
      if (items.length > 0) return items;
      if (source.ended) return null;
      this.idle = true;
      this.scheduleProbe();
      this.wake = source.poke;
      await source.changed();
      this.wake = null;
      this.idle = false;
    }
  }

  private scheduleProbe(): void {
    if (this.isCaughtUp || this.stopped || this.probeTimer || this.probing) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      this.probing = this.probe().finally(() => {
        this.probing = null;
        this.probeDelay = Math.min(this.probeDelay * 2, MAX_PROBE_MS);
      });
      void this.probing.then(() => {
        if (this.idle) this.scheduleProbe();
      });
    }, this.probeDelay);
  }

  /** Nothing after the cursor (which only moves once the handler is done) → everything that existed is handled. */
  private async probe(): Promise<void> {
    if (this.isCaughtUp || this.stopped) return;
    try {
      if (await this.deps.nothingAfter(this.cursor)) this.markCaughtUp();
    } catch {
      // the subscription's own stream reports connection trouble; the next idle moment probes again
    }
  }

  private clearProbe(): void {
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }

  private markCaughtUp(): void {
    if (this.isCaughtUp) return;
    this.isCaughtUp = true;
    this.clearProbe();
    this.resolveCaughtUp();
  }

  private fail(err: unknown): void {
    this.stopped = true;
    this.clearProbe();
    if (!this.isCaughtUp) this.rejectCaughtUp(err);
    this.o.onError?.(err);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.wake = null;
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wake = done;
    });
  }
}

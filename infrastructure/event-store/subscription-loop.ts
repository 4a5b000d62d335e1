import {
  type Checkpoint,
  compareCheckpoints,
  type EventFilter,
  type RecordedEvent,
  type Subscription,
  type SubscriptionHandler,
} from '../../application/ports/event-store.port.js';
import { costMetrics } from '../observability/metrics.js';
import { type AppendNotice, concerns } from './append-signals.js';

/** The commit a checkpoint's event belongs to: its first part (the transaction id on PostgreSQL). */
const commitOf = (c: Checkpoint): string => c.slice(0, c.indexOf('/'));

/** The first wait before looking again for a notified event that is not visible yet; doubles up to the poll. */
const FIRST_RETRY_MS = 1;

/**
 * A catch-up subscription built on repeated reads (docs/event-store.md#wake-ups): read a batch after the cursor,
 * hand it to the handler, move the cursor; when the backlog is empty, sleep until an append notice that concerns
 * this subscription's filter arrives, or the poll interval passes (the safety net for a lost notice).
 *
 * A notice can come before its event is visible to readers: an older transaction that is still open holds back
 * every newer one (the visibility rule of docs/event-store.md). So the loop remembers the newest notified
 * checkpoint, and while it is past the visibility horizon it looks again after 1, 2, 4… ms instead of waiting
 * for the poll. Once the horizon has passed it, one more read delivers it or shows it was filtered out.
 */
export function runSubscriptionLoop(o: {
  after: Checkpoint;
  batchSize: number;
  pollIntervalMs: number;
  filter?: EventFilter | undefined;
  /**
   * the events after a checkpoint; `through`: how far the log was looked at for them (past the last, when the filter
   * skipped some); `behind`: the log goes on after `through` however few events came (a read up to the log tail's
   * start, docs/event-store.md#the-log-tail)
   */
  read: (after: Checkpoint, maxCount: number) => Promise<{ events: RecordedEvent[]; through?: Checkpoint; behind?: boolean }>;
  /**
   * the checkpoint below which every event is visible now (`(xmin, 0)`); absent where every notified event is
   * visible once notified (PGlite: one session, docs/event-store.md#wake-ups)
   */
  horizon?: () => Promise<Checkpoint>;
  listen: (fn: (n: AppendNotice) => void) => () => void;
  handler: SubscriptionHandler;
  onError?: (err: unknown) => void;
  /**
   * After a batch, wait this long before reading again, so that a busy subscription takes its events in batches
   * rather than one by one; an event that comes while it is idle is read at once (docs/event-store.md#batch-linger).
   * 0: never.
   */
  lingerMs?: number;
  /** counted on `/metrics` under this name */
  name?: string;
  /** woken by a notice, wait this long before reading, and at least as long after a batch (docs/event-store.md#lagging-projectors) */
  lagMs?: number;
  /**
   * With `lagMs`: only events of these types wait. A notice of another type the filter takes ends the wait, and the
   * read that follows takes the waiting events with it, in log order (docs/event-store.md#lagging-projectors).
   */
  lagsOnly?: readonly string[];
}): Subscription {
  const lagMs = o.lagMs ?? 0;
  const afterBatchMs = Math.max(o.lingerMs ?? 0, lagMs);
  const found = costMetrics.subscriptionReads.labels({ subscription: o.name ?? 'unnamed', result: 'events' });
  const empty = costMetrics.subscriptionReads.labels({ subscription: o.name ?? 'unnamed', result: 'empty' });
  let stopped = false;
  let cursor = o.after;
  /** the newest notified checkpoint that concerns us and that we have not seen pass the horizon */
  let target: Checkpoint | null = null;
  let pendingWake = false;
  /** a notice came that must not wait for the lag (`lagsOnly`) */
  let urgent = false;
  /** what ends a wait early: `sleep`, the sleep after catching up; `lag`, the wait after a batch or for the lag */
  const wakers: { sleep: (() => void) | null; lag: (() => void) | null } = { sleep: null, lag: null };
  // without a lag nothing waits, so nothing is urgent
  const lagsOnly = lagMs > 0 && o.lagsOnly ? new Set(o.lagsOnly) : null;
  const takes = o.filter && 'eventTypes' in o.filter ? new Set(o.filter.eventTypes) : null;
  const isUrgent = (n: AppendNotice): boolean =>
    lagsOnly !== null && (n.types === null || n.types.some((t) => !lagsOnly.has(t) && (takes === null || takes.has(t))));
  let resolveCaughtUp!: () => void;
  let rejectCaughtUp!: (e: unknown) => void;
  const caughtUp = new Promise<void>((res, rej) => {
    resolveCaughtUp = res;
    rejectCaughtUp = rej;
  });
  caughtUp.catch(() => undefined);
  const unlisten = o.listen((n) => {
    if (!concerns(n, o.filter)) return;
    if (target === null || compareCheckpoints(n.checkpoint, target) > 0) target = n.checkpoint;
    pendingWake = true;
    if (isUrgent(n)) {
      urgent = true;
      wakers.lag?.();
    }
    wakers.sleep?.();
  });

  /** Waits `ms`, or not at all when `over()` already holds; its waker ends it early (a notice, `stop`). */
  const wait = (ms: number, over: () => boolean, waker: keyof typeof wakers) =>
    new Promise<void>((resolve) => {
      if (over()) {
        resolve();
        return;
      }
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        wakers[waker] = null;
        resolve();
      }
      wakers[waker] = done;
    });
  /** until a notice that concerns this subscription, or the stop */
  const sleep = (ms: number) => wait(ms, () => pendingWake || stopped, 'sleep');
  /** until an urgent notice (`lagsOnly`), or the stop */
  const lagWait = (ms: number) => wait(ms, () => urgent || stopped, 'lag');

  /** How long to sleep after catching up: short while a notified event is not visible yet, else the poll. */
  let retryMs = FIRST_RETRY_MS;
  const nextSleep = async (): Promise<number> => {
    if (target === null || compareCheckpoints(target, cursor) <= 0) {
      target = null;
      retryMs = FIRST_RETRY_MS;
      return o.pollIntervalMs;
    }
    const seen = target;
    if (!o.horizon || compareCheckpoints(seen, await o.horizon()) < 0) {
      // visible now: read once more; it is delivered or filtered out, either way nothing to wait for
      if (target === seen) target = null;
      retryMs = FIRST_RETRY_MS;
      return 0;
    }
    const ms = retryMs;
    retryMs = Math.min(retryMs * 2, o.pollIntervalMs);
    return ms;
  };

  const loop = (async () => {
    try {
      while (!stopped) {
        pendingWake = false;
        urgent = false;
        const { events: batch, through, behind } = await o.read(cursor, o.batchSize);
        if (stopped) break;
        (batch.length > 0 ? found : empty).inc();
        /** notices came during the wait after this batch: their events have waited already */
        let waited = false;
        if (batch.length > 0) {
          await o.handler(batch);
          cursor = batch[batch.length - 1]!.checkpoint;
          // the events of one commit (a lone event, or an append of several) mean the subscription keeps up: it lingers
          // only once commits come faster than it handles them
          const busy = lagMs > 0 || commitOf(batch[0]!.checkpoint) !== commitOf(batch[batch.length - 1]!.checkpoint);
          if (busy && batch.length < o.batchSize && afterBatchMs) {
            await lagWait(afterBatchMs);
            waited = pendingWake;
          }
        }
        // nothing of this filter lies up to where the log was looked at: the next read starts there
        if (through && compareCheckpoints(through, cursor) > 0) cursor = through;
        if (batch.length < o.batchSize && !behind) {
          resolveCaughtUp();
          const ms = await nextSleep();
          if (ms > 0) await sleep(ms);
          // woken by a notice: let the events of the next lagMs come too, then read them as one batch (at once when one
          // of a type that does not wait comes, or when they came during the wait after the batch: at most lagMs)
          if (lagMs > 0 && pendingWake && !waited && !stopped) await lagWait(lagMs);
        }
      }
    } catch (err) {
      stopped = true;
      rejectCaughtUp(err);
      o.onError?.(err);
    } finally {
      unlisten();
    }
  })();

  return {
    caughtUp,
    async stop() {
      stopped = true;
      wakers.sleep?.();
      wakers.lag?.();
      await loop;
    },
  };
}

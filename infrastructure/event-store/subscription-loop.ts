import type { Checkpoint, RecordedEvent, Subscription, SubscriptionHandler } from '../../application/ports/event-store.port.js';

/**
 * A catch-up subscription built on repeated reads: read a batch after the cursor, hand it to the handler,
 * move the cursor; when the backlog is empty, sleep until an in-process append wakes us or the poll
 * interval passes (appends from other processes are seen at the next poll).
 */
export function runSubscriptionLoop(o: {
  after: Checkpoint;
  batchSize: number;
  pollIntervalMs: number;
  read: (after: Checkpoint, maxCount: number) => Promise<RecordedEvent[]>;
  head: () => Promise<Checkpoint>;
  wake: (fn: () => void) => () => void;
  handler: SubscriptionHandler;
  onError?: (err: unknown) => void;
}): Subscription {
  let stopped = false;
  let cursor = o.after;
  let pendingWake = false;
  let sleeper: (() => void) | null = null;
  let resolveCaughtUp!: () => void;
  let rejectCaughtUp!: (e: unknown) => void;
  const caughtUp = new Promise<void>((res, rej) => {
    resolveCaughtUp = res;
    rejectCaughtUp = rej;
  });
  caughtUp.catch(() => undefined);
  const unwake = o.wake(() => {
    pendingWake = true;
    sleeper?.();
  });

  const sleep = () =>
    new Promise<void>((resolve) => {
      if (pendingWake || stopped) {
        resolve();
        return;
      }
      const t = setTimeout(done, o.pollIntervalMs);
      function done() {
        clearTimeout(t);
        sleeper = null;
        resolve();
      }
      sleeper = done;
    });

  const loop = (async () => {
    try {
      while (!stopped) {
        pendingWake = false;
        const batch = await o.read(cursor, o.batchSize);
        if (stopped) break;
        if (batch.length > 0) {
          await o.handler(batch);
          cursor = batch[batch.length - 1]!.checkpoint;
        }
        if (batch.length < o.batchSize) {
          resolveCaughtUp();
          await sleep();
        }
      }
    } catch (err) {
      stopped = true;
      rejectCaughtUp(err);
      o.onError?.(err);
    } finally {
      unwake();
    }
  })();

  return {
    caughtUp,
    async stop() {
      stopped = true;
      sleeper?.();
      await loop;
    },
  };
}

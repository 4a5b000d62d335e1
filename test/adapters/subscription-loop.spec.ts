import { expect } from 'chai';
import {
  type Checkpoint,
  compareCheckpoints,
  makeCheckpoint,
  type RecordedEvent,
  START,
} from '../../application/ports/event-store.port.js';
import type { AppendNotice } from '../../infrastructure/event-store/append-signals.js';
import { runSubscriptionLoop } from '../../infrastructure/event-store/subscription-loop.js';

/**
 * The subscription loop's batching (docs/event-store.md#batch-linger): after a batch it waits `lingerMs` before
 * reading again, so events that come meanwhile are handled together.
 */
describe('subscription loop: linger after a batch', () => {
  /** an in-memory log whose appends notify at once, as the embedded signals do */
  function log() {
    const events: RecordedEvent[] = [];
    const listeners = new Set<(n: AppendNotice) => void>();
    return {
      /** one event in its own commit; `commit` puts it in that commit instead (a commit's events share its first part) */
      append(type = 'Happened', commit?: bigint) {
        const checkpoint = makeCheckpoint(commit ?? BigInt(events.length + 1), BigInt(events.length + 1));
        events.push({
          id: String(events.length),
          type,
          streamName: 's-1',
          revision: BigInt(events.length),
          checkpoint,
          data: {},
          metadata: { accountId: 'acc', correlationId: 'c', causationId: null, requestId: null, actor: 't' },
          createdAt: new Date(0).toISOString(),
        } as unknown as RecordedEvent);
        for (const l of listeners) l({ checkpoint, types: [type], categories: ['s'] });
      },
      read: async (after: Checkpoint, maxCount: number) =>
        events.filter((e) => compareCheckpoints(e.checkpoint, after) > 0).slice(0, maxCount),
      events: () => events,
      horizon: async () => makeCheckpoint(BigInt(events.length + 1), 0n),
      listen: (fn: (n: AppendNotice) => void) => {
        listeners.add(fn);
        return () => listeners.delete(fn);
      },
    };
  }

  /**
   * Appends one event; while it is handled, two more; while those are handled, two more and a last one 5 ms after
   * their handler returns.
   */
  async function batchesWith(lingerMs: number, o: { horizon: boolean } = { horizon: true }): Promise<number[]> {
    const l = log();
    const sizes: number[] = [];
    let handled = 0;
    const sub = runSubscriptionLoop({
      after: START,
      batchSize: 100,
      pollIntervalMs: 60_000,
      read: async (after, n) => ({ events: await l.read(after, n) }),
      ...(o.horizon ? { horizon: l.horizon } : {}),
      listen: l.listen,
      lingerMs,
      handler: async (batch) => {
        sizes.push(batch.length);
        handled += batch.length;
        if (sizes.length <= 2) {
          l.append();
          l.append();
        }
        if (sizes.length === 2) setTimeout(() => l.append(), 5);
      },
    });
    await sub.caughtUp;
    l.append();
    const deadline = Date.now() + 2000;
    while (handled < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    await sub.stop();
    return sizes;
  }

  it('after a batch of several, takes the events that come within lingerMs in the next batch; after a lone one, reads at once', async () => {
    expect(await batchesWith(200)).to.deep.equal([1, 2, 3]);
  });

  /**
   * With a linger far longer than the test waits: `first` appends, and 5 ms after its batch is handled one more event
   * comes; answers the first two batches' event ids.
   */
  async function twoBatchesAfter(first: (l: ReturnType<typeof log>) => void): Promise<number[][]> {
    const l = log();
    const batches: number[][] = [];
    const sub = runSubscriptionLoop({
      after: START,
      batchSize: 100,
      pollIntervalMs: 60_000,
      read: async (after, n) => ({ events: await l.read(after, n) }),
      horizon: l.horizon,
      listen: l.listen,
      lingerMs: 5_000,
      handler: async (batch) => {
        batches.push(batch.map((e) => Number(e.id)));
        if (batches.length === 1) setTimeout(() => l.append(), 5);
      },
    });
    await sub.caughtUp;
    first(l);
    const deadline = Date.now() + 4_000;
    while (batches.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    await sub.stop();
    return batches;
  }

  it('does not linger after a lone event: the next one is read as it comes', async () => {
    expect(await twoBatchesAfter((l) => l.append()), 'the second event was handled well before the linger would have ended').to.deep.equal([
      [0],
      [1],
    ]);
  });

  it('does not linger after the events of one commit: the next one is read as it comes', async () => {
    // two events appended together: one commit, a batch of two
    const together = (l: ReturnType<typeof log>) => {
      const commit = BigInt(l.events().length + 1);
      l.append('Happened', commit);
      l.append('Happened', commit);
    };
    expect(await twoBatchesAfter(together), 'the third event was handled well before the linger would have ended').to.deep.equal([
      [0, 1],
      [2],
    ]);
  });

  it('without a linger, reads again at once', async () => {
    expect(await batchesWith(0)).to.deep.equal([1, 2, 2, 1]);
  });

  it('on one session (no horizon to ask), reads an event notified during a batch at once, not at the next poll', async () => {
    expect(await batchesWith(0, { horizon: false })).to.deep.equal([1, 2, 2, 1]);
  });

  it('is not caught up after a read that stopped short of the log (behind the tail), and reads on at once', async () => {
    const l = log();
    for (let i = 0; i < 5; i++) l.append();
    const third = l.events()[2]!.checkpoint;
    const seen: number[] = [];
    const sub = runSubscriptionLoop({
      after: START,
      batchSize: 100,
      pollIntervalMs: 60_000,
      // up to the third event, nothing of this reader's; then the rest
      read: async (after, n) =>
        compareCheckpoints(after, third) < 0 ? { events: [], through: third, behind: true } : { events: await l.read(after, n) },
      listen: l.listen,
      handler: async (batch) => {
        seen.push(batch.length);
      },
    });
    await sub.caughtUp;
    await sub.stop();
    expect(seen).to.deep.equal([2]);
  });
});

/**
 * A projector whose read model lags on some of its types only (docs/event-store.md#lagging-projectors): events of
 * those types wait `lagMs`; an event of another type it takes ends the wait and brings them along.
 */
describe('subscription loop: lag on some types', () => {
  /** an in-memory log of typed events, each in its own commit, whose appends notify at once */
  function log() {
    const events: RecordedEvent[] = [];
    const listeners = new Set<(n: AppendNotice) => void>();
    return {
      append(type: string) {
        const n = BigInt(events.length + 1);
        const checkpoint = makeCheckpoint(n, n);
        events.push({ id: String(events.length), type, checkpoint } as unknown as RecordedEvent);
        for (const l of listeners) l({ checkpoint, types: [type], categories: ['s'] });
      },
      read: async (after: Checkpoint, maxCount: number, types: readonly string[]) =>
        events.filter((e) => compareCheckpoints(e.checkpoint, after) > 0 && types.includes(e.type)).slice(0, maxCount),
      listen: (fn: (n: AppendNotice) => void) => {
        listeners.add(fn);
        return () => listeners.delete(fn);
      },
    };
  }

  /**
   * Runs a subscription to `Turn` and `Ended` that lags `lagMs` (a minute) on `lagsOnly`; answers its batches' types
   * once `n` events were handled.
   */
  async function batches(
    lagsOnly: readonly string[] | undefined,
    n: number,
    script: (l: ReturnType<typeof log>, batches: string[][]) => void,
    lagMs = 60_000,
  ): Promise<string[][]> {
    const l = log();
    const types = ['Turn', 'Ended'];
    const seen: string[][] = [];
    const sub = runSubscriptionLoop({
      after: START,
      batchSize: 100,
      pollIntervalMs: 60_000,
      filter: { eventTypes: types },
      read: async (after, max) => ({ events: await l.read(after, max, types) }),
      listen: l.listen,
      lagMs,
      ...(lagsOnly ? { lagsOnly } : {}),
      handler: async (batch) => {
        seen.push(batch.map((e) => e.type));
      },
    });
    await sub.caughtUp;
    script(l, seen);
    const deadline = Date.now() + 4_000;
    while (seen.flat().length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    await sub.stop();
    return seen;
  }

  it('keeps a lagging type waiting until one of another type it takes comes, then reads them in one batch', async () => {
    const got = await batches(['Turn'], 3, (l) => {
      l.append('Turn');
      // a type the subscription does not take ends no wait
      setTimeout(() => l.append('Other'), 10);
      setTimeout(() => l.append('Turn'), 15);
      setTimeout(() => l.append('Ended'), 25);
    });
    expect(got, 'the turns waited for the end, which brought them at once').to.deep.equal([['Turn', 'Turn', 'Ended']]);
  });

  it('reads a type that does not lag at once, and one that comes during the wait after its batch at once too', async () => {
    const got = await batches(['Turn'], 2, (l, seen) => {
      l.append('Ended');
      const later = () => (seen.length > 0 ? l.append('Ended') : setTimeout(later, 2));
      setTimeout(later, 2);
    });
    expect(got, 'neither waited for the minute of lag').to.deep.equal([['Ended'], ['Ended']]);
  });

  it('without lagsOnly, lets every type wait', async () => {
    const got = await batches(
      undefined,
      2,
      (l) => {
        l.append('Ended');
        setTimeout(() => l.append('Ended'), 10);
      },
      50,
    );
    expect(got, 'the first waited the 50 ms, and the second came meanwhile').to.deep.equal([['Ended', 'Ended']]);
  });
});

describe('subscription loop: a lag is waited once', () => {
  it('reads an event that came during the wait after a batch when that wait ends, not a second lag later', async () => {
    const events: RecordedEvent[] = [];
    const listeners = new Set<(n: AppendNotice) => void>();
    const append = () => {
      const n = BigInt(events.length + 1);
      const checkpoint = makeCheckpoint(n, n);
      events.push({ id: String(events.length), type: 'Happened', checkpoint } as unknown as RecordedEvent);
      for (const l of listeners) l({ checkpoint, types: ['Happened'], categories: ['s'] });
    };
    const batches: number[][] = [];
    const sub = runSubscriptionLoop({
      after: START,
      batchSize: 100,
      pollIntervalMs: 60_000,
      read: async (after, max) => ({ events: events.filter((e) => compareCheckpoints(e.checkpoint, after) > 0).slice(0, max) }),
      listen: (fn) => {
        listeners.add(fn);
        return () => listeners.delete(fn);
      },
      lagMs: 400,
      handler: async (batch) => {
        batches.push(batch.map((e) => Number(e.id)));
        if (batches.length > 1) return;
        // the second comes at once, in the wait after this batch (400 ms); the third 600 ms from now: after that wait
        // ends, within a second lag (800 ms) had the second waited one
        append();
        setTimeout(append, 600);
      },
    });
    await sub.caughtUp;
    append();
    const deadline = Date.now() + 5_000;
    while (batches.flat().length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await sub.stop();
    expect(batches, 'the second was read when the wait after the first batch ended, without the third').to.deep.equal([[0], [1], [2]]);
  });
});

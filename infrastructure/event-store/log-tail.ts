import { type Checkpoint, compareCheckpoints, type EventFilter, type RecordedEvent } from '../../application/ports/event-store.port.js';
import { categoryOf } from '../../domain/shared/streams.js';

/** How many of the newest events the tail keeps; readers further behind read the table. */
const TAIL_EVENTS = 5000;
/** One refresh reads the table in pages of this size. */
const PAGE = 1000;

const matches = (e: RecordedEvent, f: EventFilter | undefined): boolean =>
  !f || ('eventTypes' in f ? f.eventTypes.includes(e.type) : f.streamCategories.includes(categoryOf(e.streamName)));

/**
 * The newest part of the log, kept in memory and shared by every subscription of the process
 * (docs/event-store.md#the-log-tail). A dozen projectors and reactors woken by one append would each read the table;
 * through the tail, one of them reads what is new (unfiltered, under the same visibility rule) and they all take
 * their part from memory.
 *
 * The tail is exactly the log between `start` (exclusive) and `end` (inclusive), in checkpoint order: it only
 * grows by reading after `end`, and the visibility rule guarantees that an event made visible later sorts after
 * every event already read. A reader whose cursor is before `start` (catching up, a rebuild) reads the table.
 */
export class LogTail {
  private start: Checkpoint | null = null;
  private end: Checkpoint | null = null;
  private events: RecordedEvent[] = [];
  private refreshing: Promise<void> | null = null;
  private opening: Promise<void> | null = null;

  constructor(
    private readonly readTable: (after: Checkpoint, maxCount: number) => Promise<RecordedEvent[]>,
    private readonly head: () => Promise<Checkpoint>,
    private readonly keep: number = TAIL_EVENTS,
  ) {}

  /** The events after `after` matching `filter` (at most `maxCount`), or null when the tail does not reach back that far. */
  async read(after: Checkpoint, maxCount: number, filter: EventFilter | undefined): Promise<RecordedEvent[] | null> {
    await this.open();
    if (compareCheckpoints(after, this.start!) < 0) return null;
    await this.refresh();
    // the refresh (this reader's or one it joined) may have dropped the oldest events, the cursor's among them:
    // the events after the cursor are then no longer all here, and the table answers
    if (compareCheckpoints(after, this.start!) < 0) return null;
    if (compareCheckpoints(after, this.end!) > 0) return null;
    const out: RecordedEvent[] = [];
    for (let i = this.firstAfter(after); i < this.events.length && out.length < maxCount; i++) {
      const e = this.events[i]!;
      if (matches(e, filter)) out.push(e);
    }
    return out;
  }

  /** The tail starts at the head of the log when first used: it holds what is appended from then on. */
  private open(): Promise<void> {
    this.opening ??= this.head().then((h) => {
      this.start = h;
      this.end = h;
    });
    return this.opening;
  }

  /** Reads what became visible after `end`; callers that come while a refresh runs share it. */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        for (;;) {
          const page = await this.readTable(this.end!, PAGE);
          if (page.length > 0) {
            this.events.push(...page);
            this.end = page[page.length - 1]!.checkpoint;
          }
          if (page.length < PAGE) break;
        }
        const over = this.events.length - this.keep;
        if (over > 0) {
          this.start = this.events[over - 1]!.checkpoint;
          this.events = this.events.slice(over);
        }
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  /** Index of the first event after `after` (binary search: the events are in checkpoint order). */
  private firstAfter(after: Checkpoint): number {
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareCheckpoints(this.events[mid]!.checkpoint, after) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

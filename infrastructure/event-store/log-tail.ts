import {
  type Checkpoint,
  compareCheckpoints,
  type EventFilter,
  parseCheckpoint,
  type RecordedEvent,
} from '../../application/ports/event-store.port.js';
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
  /** an append was heard of since the last refresh began */
  private appended = true;
  /** the newest checkpoint an append notice named (docs/event-store.md#the-log-tail) */
  private newestHeard: Checkpoint | null = null;
  private lastRefreshAt = 0;

  constructor(
    /** the log from the table after a checkpoint, in order: of a filter, and up to a checkpoint (inclusive), when given */
    private readonly readTable: (
      after: Checkpoint,
      maxCount: number,
      o?: { filter?: EventFilter; upTo?: Checkpoint },
    ) => Promise<RecordedEvent[]>,
    private readonly head: () => Promise<Checkpoint>,
    private readonly keep: number = TAIL_EVENTS,
    /**
     * When a refresh may be left out (docs/event-store.md#the-log-tail): it reads the table only when an append was
     * heard of since the last one began, when a notice named an event the tail does not hold yet, or when the last
     * is `stalestMs` old. `soleWriter` (embedded): the process hears of every append at once, so every read may
     * leave it out. Otherwise (a server, where a notice of another process's append comes after its commit, or is
     * lost) only a subscription's read may, since a subscription takes notices as hints and polls. Unset: every
     * refresh reads.
     */
    private readonly freshness?: { stalestMs: number; now: () => number; soleWriter: boolean },
  ) {}

  /** An append was heard of (the store's own, or another process's notice naming its newest checkpoint). */
  heard(at?: Checkpoint): void {
    // as the only writer, an append the tail was handed (`took`) is held already: nothing to read
    if (this.freshness?.soleWriter && at && this.end !== null && compareCheckpoints(at, this.end) <= 0) return;
    this.appended = true;
    if (at && (this.newestHeard === null || compareCheckpoints(at, this.newestHeard) > 0)) this.newestHeard = at;
  }

  /**
   * Embedded (one session, the log's only writer): the events an append just committed, in log order, handed over
   * by the store so that no reader has to read them back (docs/event-store.md#the-log-tail). In one session the
   * log's order is the order of global positions, so the tail takes them only when they continue it with no gap:
   * the first is the position after its end and the others follow one by one. Nothing of the log can lie between
   * then. Otherwise (an append it has not read yet, positions an aborted transaction used, a refresh running that
   * may read them too) it answers false and leaves them to the next refresh, as before.
   */
  took(events: readonly RecordedEvent[]): boolean {
    if (events.length === 0 || this.end === null || this.refreshing !== null) return false;
    let next = parseCheckpoint(this.end)[1] + 1n;
    if (compareCheckpoints(events[0]!.checkpoint, this.end) <= 0) return false;
    for (const e of events) {
      if (e.globalPosition !== next) return false;
      next++;
    }
    this.events.push(...events);
    this.end = events[events.length - 1]!.checkpoint;
    this.trim();
    return true;
  }

  /**
   * The events after `after` matching `filter` (at most `maxCount`), or null when the tail does not reach back that
   * far; `through` is how far the log was looked at for them: the tail's end when fewer than `maxCount` matched, so
   * a reader may move its cursor there (nothing of its filter lies between).
   */
  async read(
    after: Checkpoint,
    maxCount: number,
    filter: EventFilter | undefined,
    /** a subscription's read, which may be answered from the tail as it is when nothing was heard since */
    hinted = false,
  ): Promise<{ events: RecordedEvent[]; through: Checkpoint } | null> {
    await this.open();
    if (compareCheckpoints(after, this.start!) < 0) return null;
    const mayReuse = this.freshness !== undefined && (this.freshness.soleWriter || hinted);
    if (!mayReuse || this.stale()) {
      const joined = this.refreshing !== null;
      await this.refresh();
      // on a server, the refresh it joined may have begun before the commit of an event a notice named meanwhile:
      // read it now, rather than the subscription asking for the visibility horizon and then reading again
      if (joined && hinted && !this.freshness?.soleWriter && this.namedNotHeld()) await this.refresh();
    }
    // the refresh (this reader's or one it joined) may have dropped the oldest events, the cursor's among them:
    // the events after the cursor are then no longer all here, and the table answers
    if (compareCheckpoints(after, this.start!) < 0) return null;
    if (compareCheckpoints(after, this.end!) > 0) return null;
    const out: RecordedEvent[] = [];
    for (let i = this.firstAfter(after); i < this.events.length && out.length < maxCount; i++) {
      const e = this.events[i]!;
      if (matches(e, filter)) out.push(e);
    }
    return { events: out, through: out.length < maxCount ? this.end! : out[out.length - 1]!.checkpoint };
  }

  /**
   * For a reader behind the tail (a subscription whose cursor the tail dropped, or one catching up): the events after
   * `after` matching `filter` up to the tail's start, from the table; null when `after` is not behind the tail. When
   * fewer than `maxCount` match there, `through` is the tail's start: nothing of the filter lies between, so the reader
   * moves its cursor there and reads from memory next (docs/event-store.md#the-log-tail). `behind`: the reader is not
   * caught up, whatever it got: the log goes on after `through`. Without this, a reader whose events are rare stayed
   * behind for good, and each of its reads scanned the table from its old cursor to the head.
   */
  async behind(
    after: Checkpoint,
    maxCount: number,
    filter: EventFilter | undefined,
  ): Promise<{ events: RecordedEvent[]; through: Checkpoint; behind: true } | null> {
    await this.open();
    const upTo = this.start!;
    if (compareCheckpoints(after, upTo) >= 0) return null;
    const events = await this.readTable(after, maxCount, { ...(filter ? { filter } : {}), upTo });
    return { events, through: events.length < maxCount ? upTo : events[events.length - 1]!.checkpoint, behind: true };
  }

  /** The tail starts at the head of the log when first used: it holds what is appended from then on. */
  private open(): Promise<void> {
    this.opening ??= this.head().then((h) => {
      this.start = h;
      this.end = h;
    });
    return this.opening;
  }

  /** Whether a refresh that may be left out must read: see `freshness`. */
  private stale(): boolean {
    const f = this.freshness!;
    if (this.refreshing || this.appended || this.namedNotHeld()) return true;
    return f.now() - this.lastRefreshAt >= f.stalestMs;
  }

  /** A notice named an event the tail does not hold yet (not visible yet, or not read yet). */
  private namedNotHeld(): boolean {
    return this.newestHeard !== null && compareCheckpoints(this.newestHeard, this.end!) > 0;
  }

  /** Reads what became visible after `end`; callers that come while a refresh runs share it. */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      this.appended = false;
      if (this.freshness) this.lastRefreshAt = this.freshness.now();
      try {
        for (;;) {
          const page = await this.readTable(this.end!, PAGE);
          if (page.length > 0) {
            this.events.push(...page);
            this.end = page[page.length - 1]!.checkpoint;
          }
          if (page.length < PAGE) break;
        }
        this.trim();
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  /** Drops the oldest events past `keep`; the tail then starts after the last one dropped. */
  private trim(): void {
    const over = this.events.length - this.keep;
    if (over > 0) {
      this.start = this.events[over - 1]!.checkpoint;
      this.events = this.events.slice(over);
    }
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

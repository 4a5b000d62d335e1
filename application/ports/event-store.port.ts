import type { Event } from '../../domain/shared/types.js';

/**
 * The event store port. One meaning of "revision" everywhere: the 0-based index of the last event in a
 * stream (as EventStoreDB counts it). `no_stream` means the stream must not exist; `any` skips the check;
 * `stream_exists` requires at least one event.
 */
export type ExpectedRevision = bigint | 'no_stream' | 'any' | 'stream_exists';

export type EventMetadata = Readonly<{
  accountId: string;
  correlationId: string;
  causationId: string | null;
  requestId: string | null;
  /** who did it: `key:<apiKeyId>`, `admin`, `system:<component>`, `cli` */
  actor: string;
  /** Version of the data's shape; upcasters lift old versions on read (docs/event-store.md#aggregates-and-events). */
  schemaVersion?: number;
}>;

export type NewEvent<E extends Event = Event> = E & Readonly<{ id: string; metadata: EventMetadata }>;

/**
 * A global, totally ordered position in the store. Opaque outside the adapters except through
 * `compareCheckpoints`: two unsigned integers compared lexicographically.
 *  - PostgreSQL: (transaction id, global position), the order in which committed events become visible.
 *  - EventStoreDB: (commit position, prepare position) of `$all`.
 * Serialised as `"<a>/<b>"`; the empty start is `START`.
 */
export type Checkpoint = string;
export const START: Checkpoint = '0/0';

export const parseCheckpoint = (c: Checkpoint): [bigint, bigint] => {
  const slash = slashOf(c);
  return [BigInt(c.slice(0, slash)), BigInt(c.slice(slash + 1))];
};
export const makeCheckpoint = (a: bigint, b: bigint): Checkpoint => `${a}/${b}`;
/**
 * The two parts compared as the decimal numbers they are, digit by digit: the log tail, the subscriptions and the
 * read models compare checkpoints on every notice and read, and building four BigInts a comparison showed in the
 * process's profile. A checkpoint that is not two runs of digits throws, as in `parseCheckpoint`.
 */
export const compareCheckpoints = (x: Checkpoint, y: Checkpoint): -1 | 0 | 1 => {
  const xs = slashOf(x);
  const ys = slashOf(y);
  return compareDigits(x, 0, xs, y, 0, ys) || compareDigits(x, xs + 1, x.length, y, ys + 1, y.length);
};

/** Where a checkpoint's `/` is, once its two parts are checked to be runs of digits (else it throws). */
function slashOf(c: Checkpoint): number {
  const slash = c.indexOf('/');
  if (slash <= 0 || slash === c.length - 1) throw new Error(`bad checkpoint ${c}`);
  for (let i = 0; i < c.length; i++) {
    const d = c.charCodeAt(i);
    if (i !== slash && (d < 48 || d > 57)) throw new Error(`bad checkpoint ${c}`);
  }
  return slash;
}

/** Two runs of decimal digits compared as numbers: leading zeros skipped, then the longer is larger, then the first digit that differs. */
function compareDigits(x: string, xFrom: number, xTo: number, y: string, yFrom: number, yTo: number): -1 | 0 | 1 {
  while (xFrom < xTo - 1 && x.charCodeAt(xFrom) === 48) xFrom++;
  while (yFrom < yTo - 1 && y.charCodeAt(yFrom) === 48) yFrom++;
  if (xTo - xFrom !== yTo - yFrom) return xTo - xFrom < yTo - yFrom ? -1 : 1;
  for (let i = 0; i < xTo - xFrom; i++) {
    const a = x.charCodeAt(xFrom + i);
    const b = y.charCodeAt(yFrom + i);
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}

export type RecordedEvent<E extends Event = Event> = E &
  Readonly<{
    id: string;
    metadata: EventMetadata;
    streamName: string;
    streamRevision: bigint;
    /** Position in the global log ($all commit position on ESDB, `global_position` on PostgreSQL). */
    globalPosition: bigint;
    /** Where a reader resumes after this event. */
    checkpoint: Checkpoint;
    createdAt: string;
  }>;

export type AppendResult = Readonly<{ nextRevision: bigint; checkpoint: Checkpoint }>;

/** Server-side filter for $all reads and subscriptions: by event type or by stream category. */
export type EventFilter = Readonly<{ eventTypes: readonly string[] }> | Readonly<{ streamCategories: readonly string[] }>;

export type ReadStreamOptions = Readonly<{
  direction?: 'forwards' | 'backwards';
  /** inclusive; default: the first event (forwards) or the last (backwards) */
  fromRevision?: bigint;
  maxCount?: number;
}>;

export type ReadAllOptions = Readonly<{
  /** exclusive: events strictly after this checkpoint */
  after?: Checkpoint;
  maxCount?: number;
  filter?: EventFilter;
}>;

export type SubscriptionHandler = (batch: readonly RecordedEvent[]) => Promise<void>;

export interface Subscription {
  /** resolves once the subscription has delivered everything that existed when it started */
  readonly caughtUp: Promise<void>;
  stop(): Promise<void>;
}

export type SubscribeOptions = Readonly<{
  after: Checkpoint;
  filter?: EventFilter;
  /** most events per handler call */
  batchSize?: number;
  /** the projector's or reactor's name, for the counts on `/metrics` (docs/operations.md#what-an-operation-costs) */
  name?: string;
  /**
   * Woken by an append, wait this long before reading, and as long after each batch: the events of that time come
   * as one batch (docs/event-store.md#lagging-projectors). For consumers nothing waits on; 0 or unset: read at once.
   */
  lagMs?: number;
  /**
   * With `lagMs`: only events of these types wait; a notice of any other type the filter takes is read at once, and
   * brings the waiting ones with it (docs/event-store.md#lagging-projectors). Unset: every event waits.
   */
  lagsOnly?: readonly string[];
  /** called when the subscription dies for good (handler error, or reconnection given up) */
  onError?: (err: unknown) => void;
}>;

/** One stream's part of `appendMany`. */
export type StreamAppend = Readonly<{ stream: string; events: readonly NewEvent[]; expectedRevision: ExpectedRevision }>;

export interface EventStorePort {
  readonly kind: 'postgres' | 'eventstoredb';
  appendToStream(stream: string, events: readonly NewEvent[], o: { expectedRevision: ExpectedRevision }): Promise<AppendResult>;
  /**
   * Appends to several streams at once, each exactly as `appendToStream` would (its own expected revision, its
   * own idempotency by event id) and answered in the same order: a result, or the conflict of that stream alone.
   * It is not a transaction across streams. The PostgreSQL store does it in one round trip and one commit
   * (docs/event-store.md#appending).
   */
  appendMany(appends: readonly StreamAppend[]): Promise<(AppendResult | WrongExpectedRevisionError)[]>;
  /** `[]` and revision `no_stream` for a stream that does not exist. */
  readStream(stream: string, o?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Several whole streams, forwards, in one go where the store can (a missing stream reads as `[]`). */
  readStreams(streams: readonly string[]): Promise<Map<string, RecordedEvent[]>>;
  readAll(o?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** How many events `readAll` with this filter would read from the start now (a rebuild's progress total). */
  countAll(o?: { filter?: EventFilter }): Promise<number>;
  /** Catch-up subscription: delivers batches in checkpoint order, first the backlog, then live events. */
  subscribe(o: SubscribeOptions, handler: SubscriptionHandler): Subscription;
  /** The checkpoint of the newest event visible to readers now (START on an empty store). */
  headCheckpoint(): Promise<Checkpoint>;
  /**
   * Where this store instance is the log's only writer (embedded), it tells `onAppended` of every stream it
   * appends to, so that a cache of aggregates knows whether a state it keeps is still the stream's
   * (docs/event-store.md#the-aggregate-cache); null where other writers may append.
   */
  readonly soleWriter: Readonly<{ onAppended(fn: (stream: string, revision: bigint) => void): () => void }> | null;
  close(): Promise<void>;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`wrong expected revision on ${stream}: expected ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/** Revision of a stream after reading it: `no_stream` when empty. */
export const revisionOf = (events: readonly RecordedEvent[]): bigint | 'no_stream' =>
  events.length === 0 ? 'no_stream' : events[events.length - 1]!.streamRevision;

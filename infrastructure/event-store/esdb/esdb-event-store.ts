/**
 * The EventStoreDB adapter of the event-store port. This file holds the port's operations; the pieces they share
 * live next to it: event and checkpoint mapping (`event-mapping.ts`), the `$all` filter (`filters.ts`), the
 * filtered `$all` read the client cannot send itself (`filtered-read-all.ts`) and the reconnecting catch-up
 * subscription (`catch-up-subscription.ts`).
 */
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  START as FROM_START,
  type Position,
  StreamNotFoundError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import {
  type AppendResult,
  type Checkpoint,
  compareCheckpoints,
  type EventFilter,
  type EventStorePort,
  type ExpectedRevision,
  makeCheckpoint,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  START,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
  type SubscriptionHandler,
  WrongExpectedRevisionError,
} from '../../../application/ports/event-store.port.js';
import { costMetrics } from '../../observability/metrics.js';
import { CatchUpSubscription } from './catch-up-subscription.js';
import { fromClient, positionOf, toEsdbExpected, toJsonEvent, toRecorded } from './event-mapping.js';
import { readAllFiltered } from './filtered-read-all.js';
import { EXCLUDE_SYSTEM_TYPES, isSystem, keep, serverFilter, toClientFilter } from './filters.js';

export type EsdbEventStoreOptions = Readonly<{
  /** Resubscribing after a dropped subscription: failures in a row before `onError`, and the first delay (doubles). */
  reconnect?: Readonly<{ maxAttempts?: number; baseDelayMs?: number }>;
  /** First wait before an idle, not-yet-caught-up subscription asks `readAll` whether anything is left (doubles). */
  caughtUpProbeMs?: number;
  /** How long an append may go unanswered before it fails as unavailable (default 10 s; see `appendToStream`). */
  appendTimeoutMs?: number;
}>;

const DEFAULT_READ_ALL_MAX = 1000;
const DEFAULT_APPEND_TIMEOUT_MS = 10_000;

/**
 * The client sends appends over one shared batch-append stream; an append written just as that stream drops can
 * be left unanswered for ever (its promise is registered after the stream's error already rejected the others).
 * An append that gets no answer within the deadline fails as unavailable instead (a 503 to an API client, a retry
 * for a worker). Its outcome is unknown: it may have been written, and a retry with the same event ids is
 * idempotent (docs/event-store.md#eventstoredb).
 */
function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          Object.assign(new Error(`EventStoreDB did not answer an append within ${ms} ms; its outcome is unknown`), { code: 'ETIMEDOUT' }),
        ),
      ms,
    );
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
const DEFAULT_BATCH_SIZE = 500;
const HEAD_PAGE = 16;
/** Page size of `countAll`'s read. */
const COUNT_PAGE = 5000;

/**
 * Event store on EventStoreDB through `@eventstore/db-client` 6.2.1 (gRPC, server 21.10 or newer).
 *
 * Revisions are EventStoreDB's own: 0-based, the index of the stream's last event (docs/event-store.md); a
 * checkpoint is the `$all` position `<commit>/<prepare>`, so `compareCheckpoints` orders it like the server does.
 * `START` (`0/0`) means "from the beginning" (no event sits at 0/0: the log opens with a chunk header and an
 * epoch record).
 *
 * Reads of `$all` exclude system events (`$`-prefixed types, and `$`-prefixed streams). They filter on the
 * server: event types by an anchored regex, categories by the stream-name prefix `<category>-`, and again on
 * the client, which also trims the inclusive start of EventStoreDB's forward reads (the port's `after` is
 * exclusive). Client 6.2.1's `readAll` takes no filter, so filtered reads send the same Streams/Read call it
 * would, with `FilterOptions` set, through the client's own call machinery (see `filtered-read-all.ts`).
 *
 * Subscriptions are catch-up subscriptions to `$all` with the same server-side filter, resumed after a dropped
 * connection from the last checkpoint the handler finished, so nothing is lost or repeated.
 */
export class EsdbEventStore implements EventStorePort {
  readonly kind = 'eventstoredb' as const;
  /** a server: other processes may append */
  readonly soleWriter = null;
  private readonly client: EventStoreDBClient;
  /** Appends have a client of their own, replaced when its shared append stream stops answering. */
  private appender: EventStoreDBClient;
  private readonly subscriptions = new Set<CatchUpSubscription>();

  constructor(
    private readonly connectionString: string,
    private readonly o: EsdbEventStoreOptions = {},
  ) {
    this.client = EventStoreDBClient.connectionString(connectionString);
    this.appender = EventStoreDBClient.connectionString(connectionString);
  }

  /** A fresh append client after an unanswered append; the stuck one is disposed (its waiting appends fail). */
  private replaceAppender(stuck: EventStoreDBClient): void {
    if (this.appender !== stuck) return; // replaced already
    this.appender = EventStoreDBClient.connectionString(this.connectionString);
    void stuck.dispose().catch(() => undefined);
  }

  async appendToStream(stream: string, events: readonly NewEvent[], o: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    if (events.length === 0) throw new Error('appendToStream needs at least one event');
    const data = events.map(toJsonEvent);
    let result: Awaited<ReturnType<EventStoreDBClient['appendToStream']>>;
    const appender = this.appender;
    try {
      result = await withDeadline(
        appender.appendToStream(stream, data, { expectedRevision: toEsdbExpected(o.expectedRevision) }),
        this.o.appendTimeoutMs ?? DEFAULT_APPEND_TIMEOUT_MS,
      );
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) throw new WrongExpectedRevisionError(stream, o.expectedRevision, err.actualVersion);
      if ((err as { code?: unknown }).code === 'ETIMEDOUT') this.replaceAppender(appender);
      throw err;
    }
    // one append request per stream here (docs/operations.md#what-an-operation-costs)
    costMetrics.appendStatements.inc();
    costMetrics.appends.inc();
    costMetrics.events.inc(events.length);
    const checkpoint = result.position
      ? makeCheckpoint(result.position.commit, result.position.prepare)
      : await this.checkpointAt(stream, result.nextExpectedRevision);
    return { nextRevision: result.nextExpectedRevision, checkpoint };
  }

  /** An append answered without a position (some idempotent replays): the position of the event itself. */
  private async checkpointAt(stream: string, revision: bigint): Promise<Checkpoint> {
    const [e] = await this.readStream(stream, { fromRevision: revision, maxCount: 1 });
    if (!e) throw new Error(`append to ${stream} reported revision ${revision}, which cannot be read`);
    return e.checkpoint;
  }

  async appendMany(appends: readonly StreamAppend[]): Promise<(AppendResult | WrongExpectedRevisionError)[]> {
    // EventStoreDB appends one stream per call; the calls go out together
    return Promise.all(
      appends.map((a) =>
        this.appendToStream(a.stream, a.events, { expectedRevision: a.expectedRevision }).catch((err: unknown) => {
          if (err instanceof WrongExpectedRevisionError) return err;
          throw err;
        }),
      ),
    );
  }

  async readStreams(streams: readonly string[]): Promise<Map<string, RecordedEvent[]>> {
    const read = await Promise.all(streams.map(async (s) => [s, await this.readStream(s)] as const));
    return new Map(read);
  }

  async readStream(stream: string, o: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (o.maxCount !== undefined && o.maxCount <= 0) return [];
    const backwards = o.direction === 'backwards';
    const out: RecordedEvent[] = [];
    try {
      const reading = this.client.readStream(stream, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: o.fromRevision ?? (backwards ? END : FROM_START),
        maxCount: o.maxCount ?? Number.MAX_SAFE_INTEGER,
      });
      for await (const r of reading) if (r.event) out.push(toRecorded(fromClient(r.event)));
    } catch (err) {
      if (err instanceof StreamNotFoundError) return [];
      throw err;
    }
    return out;
  }

  async readAll(o: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const maxCount = o.maxCount ?? DEFAULT_READ_ALL_MAX;
    const wire = serverFilter(o.filter);
    if (wire === 'nothing' || maxCount <= 0) return [];
    let after = o.after ?? START;
    const out: RecordedEvent[] = [];
    for (;;) {
      // forward reads of $all include the event at the start position: ask for one more and drop it below
      const ask = maxCount - out.length + (after === START ? 0 : 1);
      const page = await readAllFiltered(this.client, {
        from: after === START ? 'start' : positionOf(after),
        backwards: false,
        maxCount: ask,
        filter: wire,
      });
      for (const e of page) {
        const cp = makeCheckpoint(e.commit, e.prepare);
        if (after !== START && compareCheckpoints(cp, after) <= 0) continue;
        after = cp;
        if (!keep(o.filter, e)) continue;
        out.push(toRecorded(e));
        if (out.length === maxCount) return out;
      }
      if (page.length < ask) return out; // the end of $all
      // a full page, thinned on the client (system events in user-named streams): read on after it
    }
  }

  /** EventStoreDB has no count of a filtered `$all`: the events are read and counted, a page at a time. */
  async countAll(o: { filter?: EventFilter } = {}): Promise<number> {
    let total = 0;
    for (let after: Checkpoint = START; ; ) {
      const page = await this.readAll({ after, maxCount: COUNT_PAGE, ...(o.filter ? { filter: o.filter } : {}) });
      total += page.length;
      if (page.length < COUNT_PAGE) return total;
      after = page[page.length - 1]!.checkpoint;
    }
  }

  async headCheckpoint(): Promise<Checkpoint> {
    let before: Position | 'end' = 'end';
    for (;;) {
      const page = await readAllFiltered(this.client, { from: before, backwards: true, maxCount: HEAD_PAGE, filter: EXCLUDE_SYSTEM_TYPES });
      for (const e of page) {
        if (before !== 'end' && (e.commit > before.commit || (e.commit === before.commit && e.prepare >= before.prepare))) continue;
        if (!isSystem(e)) return makeCheckpoint(e.commit, e.prepare);
      }
      const oldest = page[page.length - 1];
      if (!oldest || page.length < HEAD_PAGE) return START;
      before = { commit: oldest.commit, prepare: oldest.prepare };
    }
  }

  subscribe(o: SubscribeOptions, handler: SubscriptionHandler): Subscription {
    const wire = serverFilter(o.filter);
    if (wire === 'nothing') return { caughtUp: Promise.resolve(), stop: async () => undefined };
    const clientFilter = toClientFilter(wire);
    const sub = new CatchUpSubscription(
      {
        open: (after) =>
          this.client.subscribeToAll({ fromPosition: after === START ? FROM_START : positionOf(after), filter: clientFilter }),
        nothingAfter: async (after) => (await this.readAll({ after, maxCount: 1, ...(o.filter ? { filter: o.filter } : {}) })).length === 0,
        finished: (s) => this.subscriptions.delete(s),
      },
      {
        after: o.after,
        filter: o.filter,
        batchSize: Math.max(1, o.batchSize ?? DEFAULT_BATCH_SIZE),
        maxAttempts: this.o.reconnect?.maxAttempts ?? 6,
        baseDelayMs: this.o.reconnect?.baseDelayMs ?? 100,
        probeMs: this.o.caughtUpProbeMs ?? 200,
        onError: o.onError,
      },
      handler,
    );
    this.subscriptions.add(sub);
    return sub;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    await Promise.all([this.client.dispose(), this.appender.dispose()]);
  }
}

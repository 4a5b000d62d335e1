import {
  ANY, BACKWARDS, END, EventStoreDBClient, FORWARDS, NO_STREAM, START as FROM_START, STREAM_EXISTS,
  StreamNotFoundError, WrongExpectedVersionError, convertToCommandError, eventTypeFilter, jsonEvent, streamNameFilter,
  type AllStreamResolvedEvent, type AllStreamSubscription, type AppendExpectedRevision, type Filter, type JSONType,
  type Position, type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import type { CallOptions, Metadata } from '@grpc/grpc-js';
import {
  START, compareCheckpoints, makeCheckpoint, parseCheckpoint, WrongExpectedRevisionError,
  type AppendResult, type Checkpoint, type EventFilter, type EventMetadata, type EventStorePort, type ExpectedRevision,
  type NewEvent, type ReadAllOptions, type ReadStreamOptions, type RecordedEvent, type SubscribeOptions, type Subscription,
  type SubscriptionHandler,
} from '../../application/ports/event-store.port.js';
import { categoryOf } from '../../domain/shared/streams.js';
import { upcast } from './upcasters.js';

export type EsdbEventStoreOptions = Readonly<{
  /** Resubscribing after a dropped subscription: failures in a row before `onError`, and the first delay (doubles). */
  reconnect?: Readonly<{ maxAttempts?: number; baseDelayMs?: number }>;
  /** First wait before an idle, not-yet-caught-up subscription asks `readAll` whether anything is left (doubles). */
  caughtUpProbeMs?: number;
}>;

const DEFAULT_READ_ALL_MAX = 1000;
const DEFAULT_BATCH_SIZE = 500;
const HEAD_PAGE = 16;
const MAX_BACKOFF_MS = 5000;
const MAX_PROBE_MS = 5000;
const SYSTEM_PREFIX = '$';

/**
 * Event store on EventStoreDB through `@eventstore/db-client` 6.2.1 (gRPC, server 21.10 or newer).
 *
 * Revisions are EventStoreDB's own (0-based, STYLE.md R5); a checkpoint is the `$all` position
 * `<commit>/<prepare>`, so `compareCheckpoints` orders it like the server does. `START` (`0/0`) means "from the
 * beginning" (no event sits at 0/0: the log opens with a chunk header and an epoch record).
 *
 * Reads of `$all` exclude system events (`$`-prefixed types, and `$`-prefixed streams). They filter on the
 * server: event types by an anchored regex, categories by the stream-name prefix `<category>-`, and again on
 * the client, which also trims the inclusive start of EventStoreDB's forward reads (the port's `after` is
 * exclusive). Client 6.2.1's `readAll` takes no filter, so filtered reads send the same Streams/Read call it
 * would, with `FilterOptions` set, through the client's own call machinery (see `callMachinery`).
 *
 * Subscriptions are catch-up subscriptions to `$all` with the same server-side filter, resumed after a dropped
 * connection from the last checkpoint the handler finished, so nothing is lost or repeated.
 */
export class EsdbEventStore implements EventStorePort {
  readonly kind = 'eventstoredb' as const;
  private readonly client: EventStoreDBClient;
  private readonly subscriptions = new Set<CatchUpSubscription>();

  constructor(connectionString: string, private readonly o: EsdbEventStoreOptions = {}) {
    this.client = EventStoreDBClient.connectionString(connectionString);
  }

  async appendToStream(stream: string, events: readonly NewEvent[], o: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    if (events.length === 0) throw new Error('appendToStream needs at least one event');
    const data = events.map((e) => jsonEvent({
      id: e.id, // the caller's id: a retried append with the same ids is idempotent on the server
      type: e.type,
      data: e.data as JSONType,
      metadata: { ...e.metadata, schemaVersion: e.metadata.schemaVersion ?? 1 },
    }));
    let result: Awaited<ReturnType<EventStoreDBClient['appendToStream']>>;
    try {
      result = await this.client.appendToStream(stream, data, { expectedRevision: toEsdbExpected(o.expectedRevision) });
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) throw new WrongExpectedRevisionError(stream, o.expectedRevision, err.actualVersion);
      throw err;
    }
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
      const page = await this.readAllRaw({ from: after === START ? 'start' : positionOf(after), backwards: false, maxCount: ask, filter: wire });
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

  async headCheckpoint(): Promise<Checkpoint> {
    let before: Position | 'end' = 'end';
    for (;;) {
      const page = await this.readAllRaw({ from: before, backwards: true, maxCount: HEAD_PAGE, filter: EXCLUDE_SYSTEM_TYPES });
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
        open: (after) => this.client.subscribeToAll({ fromPosition: after === START ? FROM_START : positionOf(after), filter: clientFilter }),
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
    await this.client.dispose();
  }

  /** One Streams/Read of `$all` with a server-side filter (see `callMachinery`). */
  private async readAllRaw(q: { from: 'start' | 'end' | Position; backwards: boolean; maxCount: number; filter: WireFilter }): Promise<RawEvent[]> {
    const { ReadReq } = streamsPb;
    const all = new ReadReq.Options.AllOptions();
    if (q.from === 'start') all.setStart(new sharedPb.Empty());
    else if (q.from === 'end') all.setEnd(new sharedPb.Empty());
    else {
      const p = new ReadReq.Options.Position();
      p.setCommitPosition(q.from.commit.toString(10));
      p.setPreparePosition(q.from.prepare.toString(10));
      all.setPosition(p);
    }
    const expr = new ReadReq.Options.FilterOptions.Expression();
    if ('regex' in q.filter) expr.setRegex(q.filter.regex); else expr.setPrefixList([...q.filter.prefixes]);
    const filter = new ReadReq.Options.FilterOptions();
    if (q.filter.on === 'stream') filter.setStreamIdentifier(expr); else filter.setEventType(expr);
    filter.setCount(new sharedPb.Empty());
    filter.setCheckpointintervalmultiplier(1);
    const uuid = new ReadReq.Options.UUIDOption();
    uuid.setString(new sharedPb.Empty());
    const options = new ReadReq.Options();
    options.setAll(all);
    options.setReadDirection(q.backwards ? ReadReq.Options.ReadDirection.BACKWARDS : ReadReq.Options.ReadDirection.FORWARDS);
    options.setResolveLinks(false);
    options.setCount(String(q.maxCount));
    options.setUuidOption(uuid);
    options.setFilter(filter);
    const req = new ReadReq();
    req.setOptions(options);

    const m = callMachinery(this.client);
    return m.execute(streamsGrpc.StreamsClient, 'readAll', (grpcClient) => new Promise<RawEvent[]>((resolve, reject) => {
      const out: RawEvent[] = [];
      const call = grpcClient.read(req, ...m.callArguments({}, { deadline: Infinity }));
      call.on('data', (res: InstanceType<typeof streamsPb.ReadResp>) => {
        const e = res.getEvent()?.getEvent();
        if (e) out.push(fromWire(e));
      });
      call.on('error', (err: Error) => reject(convertToCommandError(err)));
      call.on('end', () => resolve(out));
    }));
  }
}

/**
 * The client's call machinery: `execute` (picks the channel, reconnects on UNAVAILABLE / NotLeader) and
 * `callArguments` (connection name, credentials, deadline). Both are `protected` members of 6.2.1's `Client`, the
 * same ones its `readAll` uses; `connectionString()` builds a plain `Client`, so no subclass can reach them.
 * The version is pinned in package.json; this fails loudly if an upgrade removes them.
 */
type CallMachinery = {
  execute<T>(
    client: typeof streamsGrpc.StreamsClient, debugName: string, action: (c: InstanceType<typeof streamsGrpc.StreamsClient>) => Promise<T>,
  ): Promise<T>;
  callArguments(options: Record<string, never>, callOptions?: Partial<CallOptions>): [Metadata, Partial<CallOptions>];
};

function callMachinery(client: EventStoreDBClient): CallMachinery {
  const m = client as unknown as Partial<CallMachinery>;
  if (typeof m.execute !== 'function' || typeof m.callArguments !== 'function') {
    throw new Error('@eventstore/db-client no longer exposes execute/callArguments; filtered $all reads need another route');
  }
  return m as CallMachinery;
}

/** An event as read, before it becomes a port `RecordedEvent`; both client paths and the raw read produce it. */
type RawEvent = Readonly<{
  id: string;
  type: string;
  streamName: string;
  revision: bigint;
  data: unknown;
  metadata: unknown;
  created: Date;
  commit: bigint;
  prepare: bigint;
}>;

function fromClient(e: EsdbRecordedEvent): RawEvent {
  if (!e.position) throw new Error(`event ${e.id} of ${e.streamId} came without a position`);
  return {
    id: e.id, type: e.type, streamName: e.streamId, revision: e.revision, data: e.data, metadata: e.metadata,
    created: e.created, commit: e.position.commit, prepare: e.position.prepare,
  };
}

const TICKS_PER_MS = 10_000n;

function fromWire(r: InstanceType<typeof streamsPb.ReadResp.ReadEvent.RecordedEvent>): RawEvent {
  const md = r.getMetadataMap();
  const json = md.get('content-type') === 'application/json';
  const custom = r.getCustomMetadata_asU8();
  const created = md.get('created'); // .NET ticks (100 ns) since the Unix epoch
  return {
    id: r.getId()?.getString() ?? '',
    type: md.get('type') ?? '',
    streamName: Buffer.from(r.getStreamIdentifier()?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8'),
    revision: BigInt(r.getStreamRevision()),
    data: json ? parseJson(r.getData_asU8()) : r.getData_asU8(),
    metadata: custom.length ? parseJson(custom) : undefined,
    created: new Date(created ? Number(BigInt(created) / TICKS_PER_MS) : 0),
    commit: BigInt(r.getCommitPosition()),
    prepare: BigInt(r.getPreparePosition()),
  };
}

function parseJson(bytes: Uint8Array): unknown {
  const text = Buffer.from(bytes).toString('utf8');
  try { return JSON.parse(text) as unknown; } catch { return bytes; }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !(v instanceof Uint8Array) && !Array.isArray(v);

function toRecorded(e: RawEvent): RecordedEvent {
  const metadata = (isRecord(e.metadata) ? e.metadata : {}) as EventMetadata;
  // our own events are JSON objects; anything else (another writer's binary event) passes through untouched
  const data = isRecord(e.data) ? upcast(e.type, e.data, metadata.schemaVersion ?? 1) : (e.data as Record<string, unknown>);
  return {
    id: e.id,
    type: e.type,
    data,
    metadata,
    streamName: e.streamName,
    streamRevision: e.revision,
    globalPosition: e.commit,
    checkpoint: makeCheckpoint(e.commit, e.prepare),
    createdAt: e.created.toISOString(),
  };
}

const isSystem = (e: Pick<RawEvent, 'type' | 'streamName'>): boolean => e.type.startsWith(SYSTEM_PREFIX) || e.streamName.startsWith(SYSTEM_PREFIX);

/** The client-side half of the filter (the server did the same, this keeps the port's semantics exact). */
const keep = (f: EventFilter | undefined, e: RawEvent): boolean =>
  !isSystem(e) && (!f || ('eventTypes' in f ? f.eventTypes.includes(e.type) : f.streamCategories.includes(categoryOf(e.streamName))));

type WireFilter = Readonly<{ on: 'stream' | 'type'; regex: string }> | Readonly<{ on: 'stream' | 'type'; prefixes: readonly string[] }>;

/** `^[^$]`: what the client's `excludeSystemEvents()` sends. */
const EXCLUDE_SYSTEM_TYPES: WireFilter = { on: 'type', regex: '^[^$]' };

/** Regex metacharacters escaped with a backslash: the same meaning in .NET's regex (the server) and JavaScript's. */
const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Exact event types as an anchored alternation; categories as stream-name prefixes (`<category>-`, STYLE.md R4). */
function serverFilter(f: EventFilter | undefined): WireFilter | 'nothing' {
  if (!f) return EXCLUDE_SYSTEM_TYPES;
  if ('eventTypes' in f) return f.eventTypes.length ? { on: 'type', regex: `^(?:${f.eventTypes.map(escapeRegex).join('|')})$` } : 'nothing';
  return f.streamCategories.length ? { on: 'stream', prefixes: f.streamCategories.map((c) => `${c}-`) } : 'nothing';
}

function toClientFilter(w: WireFilter): Filter {
  const make = w.on === 'type' ? eventTypeFilter : streamNameFilter;
  return 'regex' in w ? make({ regex: w.regex }) : make({ prefixes: [...w.prefixes] });
}

function toEsdbExpected(r: ExpectedRevision): AppendExpectedRevision {
  switch (r) {
    case 'no_stream': return NO_STREAM;
    case 'any': return ANY;
    case 'stream_exists': return STREAM_EXISTS;
    default: return r;
  }
}

function positionOf(c: Checkpoint): Position {
  const [commit, prepare] = parseCheckpoint(c);
  return { commit, prepare };
}

/** A handler failure: ends the subscription (no resubscription), unlike a dropped connection. */
class HandlerFailed extends Error {
  constructor(readonly failure: unknown) { super('subscription handler failed'); }
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
    s.on('end', () => { this.ended = true; this.poke(); });
    s.on('close', () => { this.ended = true; this.poke(); });
    // stays attached for the life of the stream: a late error on an abandoned subscription must not go unhandled
    s.on('error', (err: unknown) => { this.error ??= { err }; this.poke(); });
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
    return new Promise((resolve) => { this.waiter = resolve; });
  }
}

type CatchUpDeps = Readonly<{
  open: (after: Checkpoint) => AllStreamSubscription;
  /** true when `readAll` finds nothing after the checkpoint (the fallback caught-up test) */
  nothingAfter: (after: Checkpoint) => Promise<boolean>;
  finished: (s: CatchUpSubscription) => void;
}>;

type CatchUpOptions = Readonly<{
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
class CatchUpSubscription implements Subscription {
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

  constructor(private readonly deps: CatchUpDeps, private readonly o: CatchUpOptions, private readonly handler: SubscriptionHandler) {
    this.cursor = o.after;
    this.probeDelay = o.probeMs;
    this.caughtUp = new Promise<void>((resolve, reject) => { this.resolveCaughtUp = resolve; this.rejectCaughtUp = reject; });
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
        if (err instanceof HandlerFailed) { this.fail(err.failure); return; }
        if (this.stopped) return;
        this.failures++;
        if (this.failures > this.o.maxAttempts) { this.fail(err); return; }
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
    sub.on('confirmation', () => { this.failures = 0; });
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
        try { await this.handler(batch); } catch (err) { throw new HandlerFailed(err); }
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
      this.probing = this.probe().finally(() => { this.probing = null; this.probeDelay = Math.min(this.probeDelay * 2, MAX_PROBE_MS); });
      void this.probing.then(() => { if (this.idle) this.scheduleProbe(); });
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
      const done = () => { clearTimeout(t); this.wake = null; resolve(); };
      const t = setTimeout(done, ms);
      this.wake = done;
    });
  }
}

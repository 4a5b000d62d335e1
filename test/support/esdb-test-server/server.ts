/**
 * A protocol-level EventStoreDB stand-in for tests: a gRPC server (`@grpc/grpc-js`) speaking the part of the
 * EventStoreDB v20+ client protocol that `@eventstore/db-client` 6.x uses for appends, reads and catch-up
 * subscriptions, over an in-memory log (`log.ts`). A test instrument, not a product component: it lets the
 * EventStoreDB adapter run its contract tests where no EventStoreDB server can be installed.
 *
 * Implemented gRPC methods
 *  - event_store.client.server_features.ServerFeatures/GetSupportedMethods: what the client asks first on each
 *    channel; it lists Streams/Read, Streams/Append and (unless disabled) Streams/BatchAppend, so the client
 *    chooses BatchAppend like it does against 21.10+ servers, or the older Append.
 *  - event_store.client.streams.Streams/Append (client streaming): options first, then proposed messages;
 *    answers Success (current revision, position) or WrongExpectedVersion (current revision or no stream,
 *    and the expectation).
 *  - event_store.client.streams.Streams/BatchAppend (bidirectional): batches keyed by correlation id, answered
 *    when `is_final`; a conflict is a google.rpc.Status whose details pack `event_store.client.WrongExpectedVersion`.
 *  - event_store.client.streams.Streams/Read:
 *      · a stream, forwards/backwards from start/end/revision with a count; a missing stream answers
 *        `stream_not_found`;
 *      · `$all`, forwards/backwards from start/end/position with a count, with or without a filter (event type
 *        or stream name, by prefixes or regex). Forwards reads include the event at the given position,
 *        backwards reads start before it;
 *      · a subscription to `$all` from start/end/position (exclusive), with or without a filter: a
 *        confirmation, the backlog, `caught_up` (option `caughtUp`, as 23.10+ servers send it), then live
 *        events. Filtered subscriptions also send `checkpoint` messages every
 *        `checkpointIntervalMultiplier × window` events scanned (window = `max` or 32) and when caught up.
 *  Positions: commit = prepare = a byte-like offset that grows with every event; stream revisions from 0.
 *  Event ids go out as strings or as most/least significant bits, as the request's UUID option asks.
 *
 * Documentation followed
 *  - Appending and expected revisions: https://developers.eventstore.com/clients/grpc/appending-events.html
 *  - Idempotence (same event ids at the same place succeed without writing, a partial match is a conflict):
 *    http://docs.geteventstore.com/dotnet-api/4.0.0/optimistic-concurrency-and-idempotence/
 *  - Reading streams and `$all`, StreamNotFound: https://developers.eventstore.com/clients/grpc/reading-events.html
 *  - Catch-up subscriptions ("the positions provided to the subscriptions are exclusive"), server-side
 *    filtering and checkpoints: https://developers.eventstore.com/clients/grpc/subscriptions.html
 *  - Server-side filtering by prefix or regex on stream name or event type:
 *    https://www.eventstore.com/blog/server-side-filtering
 *  - The messages themselves: the protos compiled into `@eventstore/db-client/generated` (see `pb.ts`).
 *
 * Not modelled
 *  TLS and authentication (insecure connections only, credentials ignored), access control lists, gossip and
 *  clustering (single node: no leader election, no `requires-leader` handling, no NotLeader redirects),
 *  Streams/Delete and Streams/Tombstone (UNIMPLEMENTED, but for deleting `RESET_STREAM`: see below), stream metadata (`$$` streams, $maxAge, $maxCount,
 *  $tb), link events and `resolve_links`, subscriptions to a single stream, persistent subscriptions,
 *  projections and the system streams they write (`$ce-`, `$et-`, `$by_category`), operations (scavenging,
 *  shutdown, merge indexes), users, monitoring/stats, `fell_behind`, the append size limit, deadlines,
 *  durability (everything lives in memory and is gone on stop), explicit transactions. Regular expressions are
 *  JavaScript's, not .NET's (the same for the simple patterns the adapter sends).
 */

import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import {
  type ExpectedState,
  InMemoryLog,
  type LogFilter,
  matchesFilter,
  type ProposedEvent,
  type StoredEvent,
  type StreamReadStart,
} from './log.js';
import {
  AllStreamPosition,
  Any,
  type AppendReq,
  AppendResp,
  type BatchAppendReq,
  BatchAppendResp,
  Code,
  type DeleteReq,
  DeleteResp,
  Empty,
  GoogleEmpty,
  type ReadFilterOptions,
  type ReadReq,
  ReadResp,
  ServerFeaturesService,
  Status,
  StreamIdentifier,
  StreamsService,
  SupportedMethod,
  SupportedMethods,
  UUID,
  WrongExpectedVersion,
} from './pb.js';

export type EsdbTestServerOptions = {
  /** 0 (default) = a free port */
  port?: number;
  host?: string;
  /** send `caught_up` when a subscription reaches the end of the backlog (EventStoreDB 23.10+); default true */
  caughtUp?: boolean;
  /** advertise and serve Streams/BatchAppend (EventStoreDB 21.10+); default true, else the client uses Append */
  batchAppend?: boolean;
  /** seed a system event (`$epoch-information`, as a real node writes at start); default true */
  seedSystemEvents?: boolean;
};

export type EsdbTestServer = {
  /** `esdb://host:port?tls=false` */
  url: string;
  port: number;
  log: InMemoryLog;
  /** Aborts every active subscription call with UNAVAILABLE, as a lost connection does. */
  dropSubscriptions(): void;
  /** How many subscription calls were opened since start (a resubscription counts again). */
  subscriptionsOpened(): number;
  /** Where each subscription since start asked to begin: `start`, `end`, or the `$all` position it continues after. */
  subscriptionStarts(): ReadonlyArray<'start' | 'end' | bigint>;
  stop(): Promise<void>;
};

const DEFAULT_SEARCH_WINDOW = 32;
/** The stream whose deletion empties the test server (`Handlers.delete`). */
export const RESET_STREAM = '$test-server-reset';
const SERVER_VERSION = '24.10.0-test';
const STREAMS = 'event_store.client.streams.streams';
const FEATURES = 'event_store.client.server_features.serverfeatures';

type ActiveSubscription = { drop: () => void };

export async function startEsdbTestServer(o: EsdbTestServerOptions = {}): Promise<EsdbTestServer> {
  const log = new InMemoryLog();
  const seed = () => {
    if (!(o.seedSystemEvents ?? true)) return;
    log.append('$epoch-information', { kind: 'any' }, [
      {
        id: randomUUID(),
        type: '$epoch-information',
        contentType: 'application/json',
        data: Buffer.from(JSON.stringify({ epochNumber: 0 })),
        customMetadata: new Uint8Array(),
      },
    ]);
  };
  seed();
  const handlers = new Handlers(log, { caughtUp: o.caughtUp ?? true, batchAppend: o.batchAppend ?? true }, () => {
    log.reset();
    seed();
  });
  const server = new grpc.Server();
  server.addService(StreamsService, {
    read: handlers.read,
    append: handlers.append,
    delete: handlers.delete,
    ...((o.batchAppend ?? true) ? { batchAppend: handlers.batchAppend } : {}),
  });
  server.addService(ServerFeaturesService, { getSupportedMethods: handlers.getSupportedMethods });
  const host = o.host ?? '127.0.0.1';
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${o.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return {
    url: `esdb://${host}:${port}?tls=false`,
    port,
    log,
    dropSubscriptions: () => handlers.dropSubscriptions(),
    subscriptionsOpened: () => handlers.starts.length,
    subscriptionStarts: () => [...handlers.starts],
    stop: async () => {
      handlers.closeAll();
      server.forceShutdown();
    },
  };
}

class Handlers {
  private readonly active = new Set<ActiveSubscription>();
  private readonly closers = new Set<() => void>();
  readonly starts: Array<'start' | 'end' | bigint> = [];

  constructor(
    private readonly log: InMemoryLog,
    private readonly o: { caughtUp: boolean; batchAppend: boolean },
    private readonly reset: () => void,
  ) {}

  /**
   * Deleting streams is not modelled, but for one name: deleting `RESET_STREAM` empties the whole log, so that a
   * suite can start each test installation on an empty store as it empties its PostgreSQL tables
   * (test/support/esdb-reset.ts). Subscriptions still open are dropped, as a restarted server would.
   */
  delete: grpc.handleUnaryCall<DeleteReq, DeleteResp> = (call, callback) => {
    const name = Buffer.from(call.request.getOptions()?.getStreamIdentifier()?.getStreamName_asU8() ?? []).toString('utf8');
    if (name !== RESET_STREAM) {
      callback({ code: grpc.status.UNIMPLEMENTED, details: 'deleting streams is not modelled by the test server' });
      return;
    }
    this.dropSubscriptions();
    this.reset();
    callback(null, new DeleteResp().setNoPosition(new Empty()));
  };

  dropSubscriptions(): void {
    for (const s of [...this.active]) s.drop();
  }

  closeAll(): void {
    for (const c of [...this.closers]) c();
  }

  getSupportedMethods: grpc.handleUnaryCall<Empty, SupportedMethods> = (_call, callback) => {
    const method = (service: string, name: string, features: string[] = []) => {
      const m = new SupportedMethod();
      m.setServiceName(service);
      m.setMethodName(name);
      m.setFeaturesList(features);
      return m;
    };
    const res = new SupportedMethods();
    res.setEventStoreServerVersion(SERVER_VERSION);
    res.setMethodsList([
      method(STREAMS, 'read', ['position', 'events']),
      method(STREAMS, 'append'),
      ...(this.o.batchAppend ? [method(STREAMS, 'batchappend')] : []),
      method(FEATURES, 'getsupportedmethods'),
    ]);
    callback(null, res);
  };

  append: grpc.handleClientStreamingCall<AppendReq, AppendResp> = (call, callback) => {
    let options: ReturnType<AppendReq['getOptions']>;
    const events: ProposedEvent[] = [];
    call.on('data', (req: AppendReq) => {
      if (req.hasOptions()) options = req.getOptions();
      const m = req.getProposedMessage();
      if (m) events.push(proposed(m));
    });
    call.on('error', () => undefined); // the client went away: nothing was written
    call.on('end', () => {
      if (!options) {
        callback({ code: grpc.status.INVALID_ARGUMENT, details: 'the first AppendReq must carry options' });
        return;
      }
      const stream = streamName(options.getStreamIdentifier());
      const expected: ExpectedState = options.hasRevision()
        ? { kind: 'revision', revision: BigInt(options.getRevision()) }
        : options.hasNoStream()
          ? { kind: 'no_stream' }
          : options.hasStreamExists()
            ? { kind: 'stream_exists' }
            : { kind: 'any' };
      const out = this.log.append(stream, expected, events);
      const res = new AppendResp();
      if (out.ok) {
        const s = new AppendResp.Success();
        if (out.revision < 0n) s.setNoStream(new Empty());
        else s.setCurrentRevision(String(out.revision));
        if (out.position < 0n) s.setNoPosition(new Empty());
        else {
          const p = new AppendResp.Position();
          p.setCommitPosition(String(out.position));
          p.setPreparePosition(String(out.position));
          s.setPosition(p);
        }
        res.setSuccess(s);
      } else {
        const w = new AppendResp.WrongExpectedVersion();
        if (out.current === 'no_stream') w.setCurrentNoStream(new Empty());
        else w.setCurrentRevision(String(out.current));
        if (expected.kind === 'revision') w.setExpectedRevision(String(expected.revision));
        else if (expected.kind === 'no_stream') w.setExpectedNoStream(new Empty());
        else if (expected.kind === 'stream_exists') w.setExpectedStreamExists(new Empty());
        else w.setExpectedAny(new Empty());
        res.setWrongExpectedVersion(w);
      }
      callback(null, res);
    });
  };

  batchAppend: grpc.handleBidiStreamingCall<BatchAppendReq, BatchAppendResp> = (call) => {
    const pending = new Map<string, { options: NonNullable<ReturnType<BatchAppendReq['getOptions']>>; events: ProposedEvent[] }>();
    call.on('data', (req: BatchAppendReq) => {
      const correlation = uuidString(req.getCorrelationId());
      let batch = pending.get(correlation);
      if (!batch) {
        const options = req.getOptions();
        if (!options) {
          call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'the first BatchAppendReq of a batch must carry options' });
          return;
        }
        batch = { options, events: [] };
        pending.set(correlation, batch);
      }
      for (const m of req.getProposedMessagesList()) batch.events.push(proposed(m));
      if (!req.getIsFinal()) return;
      pending.delete(correlation);
      const { options } = batch;
      const expected: ExpectedState = options.hasStreamPosition()
        ? { kind: 'revision', revision: BigInt(options.getStreamPosition()) }
        : options.hasNoStream()
          ? { kind: 'no_stream' }
          : options.hasStreamExists()
            ? { kind: 'stream_exists' }
            : { kind: 'any' };
      const out = this.log.append(streamName(options.getStreamIdentifier()), expected, batch.events);
      const res = new BatchAppendResp();
      res.setCorrelationId(req.getCorrelationId());
      res.setStreamIdentifier(options.getStreamIdentifier());
      if (expected.kind === 'revision') res.setStreamPosition(String(expected.revision));
      else if (expected.kind === 'no_stream') res.setNoStream(new GoogleEmpty());
      else if (expected.kind === 'stream_exists') res.setStreamExists(new GoogleEmpty());
      else res.setAny(new GoogleEmpty());
      if (out.ok) {
        const s = new BatchAppendResp.Success();
        if (out.revision < 0n) s.setNoStream(new GoogleEmpty());
        else s.setCurrentRevision(String(out.revision));
        if (out.position < 0n) s.setNoPosition(new GoogleEmpty());
        else {
          const p = new AllStreamPosition();
          p.setCommitPosition(String(out.position));
          p.setPreparePosition(String(out.position));
          s.setPosition(p);
        }
        res.setSuccess(s);
      } else {
        const w = new WrongExpectedVersion();
        if (out.current === 'no_stream') w.setCurrentNoStream(new GoogleEmpty());
        else w.setCurrentStreamRevision(String(out.current));
        if (expected.kind === 'revision') w.setExpectedStreamPosition(String(expected.revision));
        else if (expected.kind === 'no_stream') w.setExpectedNoStream(new GoogleEmpty());
        else if (expected.kind === 'stream_exists') w.setExpectedStreamExists(new GoogleEmpty());
        else w.setExpectedAny(new GoogleEmpty());
        const details = new Any();
        details.pack(w.serializeBinary(), 'event_store.client.WrongExpectedVersion');
        const status = new Status();
        status.setCode(Code.FAILED_PRECONDITION);
        status.setMessage('WrongExpectedVersion');
        status.setDetails(details);
        res.setError(status);
      }
      call.write(res);
    });
    call.on('error', () => undefined);
    call.on('end', () => call.end());
  };

  read: grpc.handleServerStreamingCall<ReadReq, ReadResp> = (call) => {
    void this.serveRead(call).catch((err: unknown) => {
      if (!call.writableEnded) call.emit('error', { code: grpc.status.INTERNAL, details: String(err) });
    });
  };

  private async serveRead(call: grpc.ServerWritableStream<ReadReq, ReadResp>): Promise<void> {
    const options = call.request.getOptions();
    if (!options) {
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'ReadReq without options' });
      return;
    }
    const structuredIds = options.getUuidOption()?.hasStructured() ?? false;
    let filter: ParsedFilter | null;
    try {
      filter = options.hasFilter() ? parseFilter(options.getFilter()!) : null;
    } catch (err) {
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: `bad filter: ${String(err)}` });
      return;
    }
    const count = options.hasCount() ? Number(BigInt(options.getCount())) : Number.POSITIVE_INFINITY;
    const backwards = options.getReadDirection() === ReadDirection.BACKWARDS;
    const stream = options.getStream();
    const all = options.getAll();
    const channel = new Outgoing(call);
    this.closers.add(channel.close);
    try {
      if (stream) {
        if (options.hasSubscription()) {
          call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: 'stream subscriptions are not modelled by the test server' });
          return;
        }
        const name = streamName(stream.getStreamIdentifier());
        const from: StreamReadStart = stream.hasRevision()
          ? { kind: 'revision', revision: BigInt(stream.getRevision()) }
          : stream.hasEnd()
            ? { kind: 'end' }
            : { kind: 'start' };
        const events = this.log.readStream(name, from, backwards, count);
        if (events === 'not_found') {
          const nf = new ReadResp.StreamNotFound();
          nf.setStreamIdentifier(stream.getStreamIdentifier());
          const res = new ReadResp();
          res.setStreamNotFound(nf);
          await channel.send(res);
        } else {
          for (const e of events) if (!(await channel.send(eventMessage(e, structuredIds)))) return;
        }
        channel.end();
        return;
      }
      if (!all) {
        call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'ReadReq without stream or $all options' });
        return;
      }
      const position = all.getPosition();
      if (options.hasSubscription()) {
        this.starts.push(position ? BigInt(position.getCommitPosition()) : all.hasEnd() ? 'end' : 'start');
        const start = position ? this.log.indexFrom(BigInt(position.getCommitPosition()), true) : all.hasEnd() ? this.log.length : 0;
        await this.serveSubscription(call, channel, start, filter, structuredIds);
        return;
      }
      // forwards: from the event at the position; backwards: from the event before it
      let i = backwards
        ? (position ? this.log.indexFrom(BigInt(position.getCommitPosition()), false) : all.hasStart() ? 0 : this.log.length) - 1
        : position
          ? this.log.indexFrom(BigInt(position.getCommitPosition()), false)
          : all.hasEnd()
            ? this.log.length
            : 0;
      let sent = 0;
      while (sent < count) {
        const e = this.log.at(i);
        if (!e) break;
        i += backwards ? -1 : 1;
        if (!matchesFilter(filter?.filter ?? null, e)) continue;
        if (!(await channel.send(eventMessage(e, structuredIds)))) return;
        sent++;
      }
      channel.end();
    } finally {
      this.closers.delete(channel.close);
    }
  }

  private async serveSubscription(
    call: grpc.ServerWritableStream<ReadReq, ReadResp>,
    channel: Outgoing,
    start: number,
    filter: ParsedFilter | null,
    structuredIds: boolean,
  ): Promise<void> {
    const entry: ActiveSubscription = {
      drop: () => {
        if (channel.closed) return;
        channel.close();
        call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'subscription dropped by the test server' });
      },
    };
    this.active.add(entry);
    try {
      const confirmation = new ReadResp.SubscriptionConfirmation();
      confirmation.setSubscriptionId(randomUUID());
      const hello = new ReadResp();
      hello.setConfirmation(confirmation);
      if (!(await channel.send(hello))) return;
      let i = start;
      let scanned = 0;
      let caughtUp = false;
      let lastScanned: StoredEvent | undefined = this.log.at(start - 1);
      while (!channel.closed) {
        for (let e = this.log.at(i); e && !channel.closed; e = this.log.at(i)) {
          i++;
          scanned++;
          lastScanned = e;
          if (matchesFilter(filter?.filter ?? null, e) && !(await channel.send(eventMessage(e, structuredIds)))) return;
          if (filter && scanned % filter.checkpointEvery === 0 && !(await channel.send(checkpointMessage(e.position)))) return;
        }
        if (!caughtUp) {
          caughtUp = true;
          if (filter && lastScanned && !(await channel.send(checkpointMessage(lastScanned.position)))) return;
          if (this.o.caughtUp) {
            const res = new ReadResp();
            res.setCaughtUp(new ReadResp.CaughtUp());
            if (!(await channel.send(res))) return;
          }
        }
        if (i >= this.log.length) await Promise.race([this.log.changed(), channel.whenClosed]);
      }
    } finally {
      this.active.delete(entry);
    }
  }
}

/** A server-streaming call's outgoing side: writes with backpressure, and knows when the call is over. */
class Outgoing {
  closed = false;
  readonly whenClosed: Promise<void>;
  private signal!: () => void;

  constructor(private readonly call: grpc.ServerWritableStream<ReadReq, ReadResp>) {
    this.whenClosed = new Promise((resolve) => {
      this.signal = resolve;
    });
    call.on('cancelled', this.close);
    call.on('close', this.close);
    call.on('error', this.close);
  }

  readonly close = (): void => {
    if (this.closed) return;
    this.closed = true;
    this.signal();
  };

  /** false when the call is over (cancelled, dropped, server stopping) */
  async send(msg: ReadResp): Promise<boolean> {
    if (this.closed) return false;
    if (!this.call.write(msg)) {
      await Promise.race([new Promise<void>((resolve) => this.call.once('drain', () => resolve())), this.whenClosed]);
    }
    return !this.closed;
  }

  end(): void {
    if (this.closed) return;
    this.close();
    this.call.end();
  }
}

type ParsedFilter = { filter: LogFilter; checkpointEvery: number };

const ReadDirection = { FORWARDS: 0, BACKWARDS: 1 } as const;

function parseFilter(f: ReadFilterOptions): ParsedFilter {
  const byStream = f.getStreamIdentifier();
  const expr = byStream ?? f.getEventType();
  if (!expr) throw new Error('a filter needs a stream_identifier or event_type expression');
  const regex = expr.getRegex();
  const window = f.hasMax() && f.getMax() > 0 ? f.getMax() : DEFAULT_SEARCH_WINDOW;
  return {
    filter: { on: byStream ? 'stream' : 'type', prefixes: expr.getPrefixList(), regex: regex ? new RegExp(regex) : null },
    checkpointEvery: Math.max(1, f.getCheckpointintervalmultiplier()) * window,
  };
}

function proposed(m: {
  getId(): InstanceType<typeof UUID> | undefined;
  getMetadataMap(): { get(k: string): string | undefined };
  getData_asU8(): Uint8Array;
  getCustomMetadata_asU8(): Uint8Array;
}): ProposedEvent {
  const md = m.getMetadataMap();
  return {
    id: uuidString(m.getId()),
    type: md.get('type') ?? '',
    contentType: md.get('content-type') ?? 'application/octet-stream',
    data: m.getData_asU8(),
    customMetadata: m.getCustomMetadata_asU8(),
  };
}

const streamName = (id: InstanceType<typeof StreamIdentifier> | undefined): string =>
  Buffer.from(id?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8');

function streamIdentifier(name: string): InstanceType<typeof StreamIdentifier> {
  const id = new StreamIdentifier();
  id.setStreamName(Uint8Array.from(Buffer.from(name, 'utf8')));
  return id;
}

/** A UUID as text, from either wire form (string, or most/least significant 64 bits). */
function uuidString(u: InstanceType<typeof UUID> | undefined): string {
  if (!u) return '';
  const s = u.getStructured();
  if (!s) return u.getString();
  const hex =
    BigInt.asUintN(64, BigInt(s.getMostSignificantBits())).toString(16).padStart(16, '0') +
    BigInt.asUintN(64, BigInt(s.getLeastSignificantBits())).toString(16).padStart(16, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function uuidMessage(id: string, structured: boolean): InstanceType<typeof UUID> {
  const u = new UUID();
  if (!structured) {
    u.setString(id);
    return u;
  }
  const hex = id.replace(/-/g, '');
  const s = new UUID.Structured();
  s.setMostSignificantBits(String(BigInt.asIntN(64, BigInt(`0x${hex.slice(0, 16)}`))));
  s.setLeastSignificantBits(String(BigInt.asIntN(64, BigInt(`0x${hex.slice(16)}`))));
  u.setStructured(s);
  return u;
}

function eventMessage(e: StoredEvent, structuredIds: boolean): ReadResp {
  const rec = new ReadResp.ReadEvent.RecordedEvent();
  rec.setId(uuidMessage(e.id, structuredIds));
  rec.setStreamIdentifier(streamIdentifier(e.streamName));
  rec.setStreamRevision(String(e.revision));
  rec.setCommitPosition(String(e.position));
  rec.setPreparePosition(String(e.position));
  const md = rec.getMetadataMap();
  md.set('type', e.type);
  md.set('content-type', e.contentType);
  md.set('created', String(e.created));
  rec.setData(e.data);
  rec.setCustomMetadata(e.customMetadata);
  const read = new ReadResp.ReadEvent();
  read.setEvent(rec);
  read.setCommitPosition(String(e.position));
  const res = new ReadResp();
  res.setEvent(read);
  return res;
}

function checkpointMessage(position: bigint): ReadResp {
  const cp = new ReadResp.Checkpoint();
  cp.setCommitPosition(String(position));
  cp.setPreparePosition(String(position));
  const res = new ReadResp();
  res.setCheckpoint(cp);
  return res;
}

/**
 * The in-memory transaction log behind the EventStoreDB test server: every event once, in append order, with
 * its `$all` position, plus an index per stream. No gRPC here; `server.ts` translates requests to these calls.
 *
 * Semantics follow the EventStoreDB documentation:
 *  - stream revisions count from 0, "no stream" is revision -1
 *    (https://developers.eventstore.com/clients/grpc/appending-events.html, "Handling concurrency");
 *  - idempotent appends: the same event ids appended again at the same place succeed without writing, a partial
 *    match is a conflict (http://docs.geteventstore.com/dotnet-api/4.0.0/optimistic-concurrency-and-idempotence/,
 *    and https://developers.eventstore.com/clients/dotnet/20.10/appending/: "identical append operations are
 *    idempotent if the optimistic concurrency check is not disabled");
 *  - `$all` is ordered by log position, here commit = prepare = a byte-like offset that grows with each record.
 */

export type StoredEvent = Readonly<{
  id: string;
  streamName: string;
  revision: bigint;
  type: string;
  contentType: string;
  data: Uint8Array;
  customMetadata: Uint8Array;
  /** .NET ticks (100 ns) since the Unix epoch, as EventStoreDB sends `created` */
  created: bigint;
  /** commit = prepare position in `$all` */
  position: bigint;
}>;

export type ProposedEvent = Readonly<{
  id: string;
  type: string;
  contentType: string;
  data: Uint8Array;
  customMetadata: Uint8Array;
}>;

export type ExpectedState =
  | Readonly<{ kind: 'revision'; revision: bigint }>
  | Readonly<{ kind: 'no_stream' }>
  | Readonly<{ kind: 'any' }>
  | Readonly<{ kind: 'stream_exists' }>;

export type AppendOutcome =
  | Readonly<{ ok: true; revision: bigint; position: bigint; idempotent: boolean }>
  | Readonly<{ ok: false; current: bigint | 'no_stream' }>;

export type StreamReadStart = Readonly<{ kind: 'start' }> | Readonly<{ kind: 'end' }> | Readonly<{ kind: 'revision'; revision: bigint }>;

/** A server-side `$all` filter: on the stream name or on the event type, by prefixes or by a regular expression. */
export type LogFilter = Readonly<{ on: 'stream' | 'type'; prefixes: readonly string[]; regex: RegExp | null }>;

export const matchesFilter = (f: LogFilter | null, e: StoredEvent): boolean => {
  if (!f) return true;
  const subject = f.on === 'stream' ? e.streamName : e.type;
  if (f.regex) return f.regex.test(subject);
  return f.prefixes.some((p) => subject.startsWith(p));
};

/** Position of the first record: a real log starts with a chunk header and an epoch record, never an event at 0. */
const FIRST_POSITION = 128n;
const TICKS_PER_MS = 10_000n;

export class InMemoryLog {
  private readonly all: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();
  private nextPosition = FIRST_POSITION;
  private waiters: Array<() => void> = [];

  /** Forgets every event (positions go on growing): the test server's reset (server.ts, `RESET_STREAM`). */
  reset(): void {
    this.all.length = 0;
    this.streams.clear();
  }

  get length(): number {
    return this.all.length;
  }
  at(index: number): StoredEvent | undefined {
    return this.all[index];
  }

  /** Resolves at the next append (live subscriptions wait on this). */
  changed(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
    });
  }

  append(stream: string, expected: ExpectedState, events: readonly ProposedEvent[]): AppendOutcome {
    const existing = this.streams.get(stream) ?? [];
    const current = existing.length === 0 ? -1n : BigInt(existing.length - 1);
    const replay = this.idempotentReplay(existing, expected, events);
    if (replay === 'conflict') return { ok: false, current: current < 0n ? 'no_stream' : current };
    if (replay) return replay;

    const okExpected =
      expected.kind === 'any'
        ? true
        : expected.kind === 'no_stream'
          ? current === -1n
          : expected.kind === 'stream_exists'
            ? current >= 0n
            : expected.revision === current;
    if (!okExpected) return { ok: false, current: current < 0n ? 'no_stream' : current };
    if (events.length === 0) {
      // an empty append succeeds and reports where the stream is (EventStoreDB answers with no position)
      return { ok: true, revision: current, position: -1n, idempotent: false };
    }

    const list = existing.length ? existing : [];
    if (!existing.length) this.streams.set(stream, list);
    const created = BigInt(Date.now()) * TICKS_PER_MS;
    let last: StoredEvent | undefined;
    for (const e of events) {
      last = { ...e, streamName: stream, revision: BigInt(list.length), created, position: this.nextPosition };
      // a prepare record's size: header, ids, names, payload (the exact figure is irrelevant, it only has to grow)
      this.nextPosition += 96n + BigInt(stream.length + e.type.length + e.data.length + e.customMetadata.length);
      list.push(last);
      this.all.push(last);
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
    return { ok: true, revision: last!.revision, position: last!.position, idempotent: false };
  }

  /**
   * EventStoreDB's idempotency check: with an expected revision (or no stream), the events right after it carry
   * the same ids → success with the original result; with `any`/`stream_exists`, the first id is looked up in the
   * stream and the following events must match. A partial match is a conflict.
   */
  private idempotentReplay(
    existing: readonly StoredEvent[],
    expected: ExpectedState,
    events: readonly ProposedEvent[],
  ): AppendOutcome | 'conflict' | null {
    const first = events[0];
    if (!first) return null;
    let start: number;
    if (expected.kind === 'revision' || expected.kind === 'no_stream') {
      start = expected.kind === 'no_stream' ? 0 : Number(expected.revision) + 1;
      if (existing[start]?.id !== first.id) return null;
    } else {
      start = existing.findIndex((e) => e.id === first.id);
      if (start < 0) return null;
    }
    for (let i = 0; i < events.length; i++) {
      if (existing[start + i]?.id !== events[i]!.id) return 'conflict';
    }
    const last = existing[start + events.length - 1]!;
    return { ok: true, revision: last.revision, position: last.position, idempotent: true };
  }

  readStream(stream: string, from: StreamReadStart, backwards: boolean, count: number): StoredEvent[] | 'not_found' {
    const list = this.streams.get(stream);
    if (!list || list.length === 0) return 'not_found';
    const out: StoredEvent[] = [];
    if (backwards) {
      let i = from.kind === 'end' ? list.length - 1 : from.kind === 'start' ? 0 : Math.min(Number(from.revision), list.length - 1);
      for (; i >= 0 && out.length < count; i--) out.push(list[i]!);
    } else {
      let i = from.kind === 'start' ? 0 : from.kind === 'end' ? list.length : Number(from.revision);
      for (; i < list.length && out.length < count; i++) out.push(list[i]!);
    }
    return out;
  }

  /** Index of the first event at or after `position` (`strict`: strictly after). */
  indexFrom(position: bigint, strict: boolean): number {
    let lo = 0;
    let hi = this.all.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = this.all[mid]!.position;
      if (p < position || (strict && p === position)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

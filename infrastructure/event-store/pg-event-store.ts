import { CompiledQuery, type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import type { ClockPort } from '../../application/ports/clock.port.js';
import {
  type AppendResult,
  type Checkpoint,
  compareCheckpoints,
  type EventFilter,
  type EventMetadata,
  type EventStorePort,
  type ExpectedRevision,
  makeCheckpoint,
  type NewEvent,
  parseCheckpoint,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  START,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
  type SubscriptionHandler,
  WrongExpectedRevisionError,
} from '../../application/ports/event-store.port.js';
import { perTurn } from '../../application/shared/per-turn.js';
import { categoryOf } from '../../domain/shared/streams.js';
import { CompiledOnce } from '../../projections/shared/compiled-once.js';
import type { Db, EventsTable } from '../db/database.js';
import { costMetrics } from '../observability/metrics.js';
import { type AppendSignals, InProcessSignals } from './append-signals.js';
import { KnownStreams } from './known-streams.js';
import { LogTail } from './log-tail.js';
import { fromStoredText } from './stored-json.js';
import { runSubscriptionLoop } from './subscription-loop.js';
import { upcast } from './upcasters.js';

const UNIQUE_VIOLATION = '23505';
/** A group-committed statement takes at most this many streams, and this many events once it has one. */
const MAX_BATCH_STREAMS = 200;
const MAX_BATCH_EVENTS = 2000;

type QueuedAppend = Pending & { resolve: (r: AppendResult) => void; reject: (e: unknown) => void };
type OutcomeRow = { outcome: string; revision: string; global_position: string | null; transaction_id: string | null };
/** An append's answer, whether this call wrote it (not a replay of an earlier one), and the time it stored */
type Written = AppendResult & { fresh: boolean; createdAt: Date };

const modeOf = (e: ExpectedRevision) => (typeof e === 'bigint' ? 'exact' : e);
const storedMetadata = (e: NewEvent) => ({ ...e.metadata, schemaVersion: e.metadata.schemaVersion ?? 1 });

function outcome(a: StreamAppend, row: OutcomeRow, createdAt: Date): Written | WrongExpectedRevisionError {
  if (row.outcome === 'conflict') {
    const actual = BigInt(row.revision);
    return new WrongExpectedRevisionError(a.stream, a.expectedRevision, actual < 0n ? 'no_stream' : actual);
  }
  return {
    nextRevision: BigInt(row.revision),
    checkpoint: makeCheckpoint(BigInt(row.transaction_id!), BigInt(row.global_position!)),
    fresh: row.outcome === 'ok',
    createdAt,
  };
}

/** the most events of one stream sent as a plain statement (docs/event-store.md#appending); more go through the function */
const MAX_PLAIN_EVENTS = 32;
/** the plain statements' texts, one per expectation's kind and number of events */
const plainTexts = new Map<string, string>();

/**
 * One stream's append as a plain statement (docs/event-store.md#appending): the compare-and-set on the stream's row
 * as `append_events` makes it, and the insert of the events from it, each value a parameter of its own. It answers
 * one row: the last revision and checkpoint written, or nulls when the compare-and-set failed and nothing was written.
 */
function plainAppend(a: Pending, texts: readonly EventText[], createdAt: Date): CompiledQuery<OutcomeRow> {
  const mode = modeOf(a.expectedRevision);
  const n = a.events.length;
  const key = `${mode}/${n}`;
  let text = plainTexts.get(key);
  if (text === undefined) {
    // $1 the stream, $2 its category, $3 the time; with an exact expectation $4 the revision; then four an event
    const first = mode === 'exact' ? 5 : 4;
    const head = {
      no_stream: `insert into streams as st (stream_name, revision) values ($1::text, ${n - 1}) on conflict (stream_name) do nothing returning st.revision`,
      any: `insert into streams as st (stream_name, revision) values ($1::text, ${n - 1}) on conflict (stream_name) do update set revision = st.revision + ${n} returning st.revision`,
      stream_exists: `update streams as st set revision = st.revision + ${n} where st.stream_name = $1::text returning st.revision`,
      exact: `update streams as st set revision = st.revision + ${n} where st.stream_name = $1::text and st.revision = $4::bigint returning st.revision`,
    }[mode];
    const rows = Array.from({ length: n }, (_, i) => {
      const p = first + i * 4;
      return `($${p}::uuid, $${p + 1}::text, $${p + 2}::jsonb, $${p + 3}::jsonb, ${i + 1})`;
    });
    text =
      `with s as (${head}), ins as (insert into events (transaction_id, event_id, stream_name, stream_category, stream_revision, event_type, data, metadata, created_at) ` +
      `select pg_current_xact_id(), v.id, $1::text, $2::text, s.revision - ${n} + v.ord, v.type, v.data, v.meta, $3::timestamptz ` +
      `from s, (values ${rows.join(', ')}) as v (id, type, data, meta, ord) order by v.ord returning global_position, stream_revision) ` +
      `select 'ok' as outcome, max(stream_revision) as revision, max(global_position) as global_position, pg_current_xact_id()::text as transaction_id from ins`;
    plainTexts.set(key, text);
  }
  const parameters: unknown[] = [a.stream, categoryOf(a.stream), createdAt];
  if (mode === 'exact') parameters.push(String(a.expectedRevision));
  for (const [i, e] of a.events.entries()) parameters.push(e.id, e.type, texts[i]!.data, texts[i]!.metadata);
  return CompiledQuery.raw(text, parameters) as CompiledQuery<OutcomeRow>;
}

/** An event's data and metadata as JSON text, made once: the append sends it, and the tail is handed it parsed. */
type EventText = { data: string; metadata: string };
type Pending = StreamAppend & { texts?: EventText[] };
const textsOf = (a: Pending): EventText[] =>
  (a.texts ??= a.events.map((e) => ({ data: JSON.stringify(e.data), metadata: JSON.stringify(storedMetadata(e)) })));

const COLUMNS = [
  'global_position',
  sql<string>`transaction_id::text`.as('transaction_id'),
  'event_id',
  'stream_name',
  'stream_category',
  'stream_revision',
  'event_type',
  'data',
  'metadata',
  'created_at',
] as const;

type Row = Selectable<EventsTable>;
type LogReadValues = { tx: string; pos: string; upToTx: string; upToPos: string; limit: number };
/** filters whose read of the log is kept compiled: the subscriptions' (a few dozen), with room to spare */
const LOG_QUERIES = 256;

/**
 * Event store on a PostgreSQL `events` table (PGlite or a server), through Kysely.
 *
 * Readers never skip a late-committing transaction: every row stores `pg_current_xact_id()`, readers only
 * see rows whose transaction id is below `pg_snapshot_xmin(pg_current_snapshot())` (no older transaction is
 * still running), and order by `(transaction_id, global_position)`. That pair is the checkpoint.
 */
export class PgEventStore implements EventStorePort {
  readonly kind = 'postgres' as const;
  readonly soleWriter: EventStorePort['soleWriter'];
  private readonly appended = new Set<(stream: string, revision: bigint) => void>();
  private readonly signals: AppendSignals;
  private readonly queue: QueuedAppend[] = [];
  private inFlight = 0;
  private pumpScheduled = false;
  private readonly maxInFlight: number;
  private readonly tail: LogTail;
  private readonly known: KnownStreams | null;
  /** whole streams asked for in one turn of the event loop, read together at its end (`gatherReads`) */
  private readonly readTogether = perTurn((names: readonly string[]) => this.readStreams(names));
  /** the visibility horizon asked for by the subscriptions in one turn of the event loop, read once for them all */
  private readonly horizonTogether = perTurn((_: readonly never[]) => this.horizon());
  /** the log's reads, compiled once per filter */
  private readonly logQueries = new Map<string, CompiledOnce<Db, LogReadValues, Row>>();

  constructor(
    private readonly db: Kysely<Db>,
    private readonly clock: ClockPort,
    private readonly o: {
      pollIntervalMs?: number;
      signals?: AppendSignals;
      appendConcurrency?: number;
      batchLingerMs?: number;
      /** start an idle append only once this turn of the event loop is over, so that appends made in the same turn go together */
      gatherAppends?: boolean;
      /**
       * read a whole stream only once this turn of the event loop is over, so that the streams asked for in the same turn
       * are read in one statement (docs/event-store.md#reading-streams)
       */
      gatherReads?: boolean;
      /** this instance is the log's only writer (embedded: docs/event-store.md#the-aggregate-cache) */
      soleWriter?: boolean;
      /**
       * the database is one session (PGlite): a transaction runs alone, so an append is visible to every reader once
       * it returns, and a subscription never asks for the visibility horizon (docs/event-store.md#wake-ups)
       */
      oneSession?: boolean;
      /**
       * with `soleWriter`: keep a filter of the streams that exist, so a stream that does not is not read
       * (docs/event-store.md#streams-known-to-be-new)
       */
      knowsStreams?: boolean;
    } = {},
  ) {
    this.signals = o.signals ?? new InProcessSignals();
    this.maxInFlight = o.appendConcurrency ?? 4;
    this.tail = new LogTail(
      (after, maxCount, r) => this.readTable(after, maxCount, r?.filter, r?.upTo),
      () => this.headCheckpoint(),
      undefined,
      { stalestMs: o.pollIntervalMs ?? 1000, now: () => performance.now(), soleWriter: o.soleWriter === true },
    );
    // the tail hears every notice first, the store's own appends and (on a server) the other processes'
    this.signals.listen((n) => this.tail.heard(n.checkpoint));
    this.known = o.soleWriter && o.knowsStreams ? new KnownStreams() : null;
    this.soleWriter = o.soleWriter
      ? {
          onAppended: (fn) => {
            this.appended.add(fn);
            return () => this.appended.delete(fn);
          },
        }
      : null;
  }

  appendToStream(stream: string, events: readonly NewEvent[], o: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    if (events.length === 0) return Promise.reject(new Error('appendToStream needs at least one event'));
    const done = this.queued(stream, events, o.expectedRevision);
    this.release();
    return done;
  }

  /** The streams' appends are queued together, so that they go in one statement (up to a batch's size) and one commit. */
  async appendMany(appends: readonly StreamAppend[]): Promise<(AppendResult | WrongExpectedRevisionError)[]> {
    if (appends.some((a) => a.events.length === 0)) throw new Error('appendMany needs at least one event per stream');
    const done = appends.map((a) => this.queued(a.stream, a.events, a.expectedRevision).catch(conflictOnly));
    this.release();
    return Promise.all(done);
  }

  private queued(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => this.queue.push({ stream, events, expectedRevision, resolve, reject }));
  }

  /** Sends what is queued: at once, or with `gatherAppends` at the end of this turn of the event loop. */
  private release(): void {
    if (!this.o.gatherAppends) this.pump();
    else if (!this.pumpScheduled) {
      this.pumpScheduled = true;
      setImmediate(() => {
        this.pumpScheduled = false;
        this.pump();
      });
    }
  }

  /**
   * Group commit (docs/event-store.md#appending): at most `appendConcurrency` append statements run at once;
   * appends that arrive meanwhile wait and go together in the next statement, one transaction and one commit
   * for all of them. A lone append goes at once, alone (with `gatherAppends`, at the end of the event loop turn).
   */
  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.takeBatch();
      this.inFlight++;
      void this.write(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private takeBatch(): QueuedAppend[] {
    let events = 0;
    let n = 0;
    while (n < this.queue.length && n < MAX_BATCH_STREAMS && (n === 0 || events + this.queue[n]!.events.length <= MAX_BATCH_EVENTS)) {
      events += this.queue[n]!.events.length;
      n++;
    }
    return this.queue.splice(0, n);
  }

  private async write(batch: readonly QueuedAppend[]): Promise<void> {
    let results: (Written | WrongExpectedRevisionError)[];
    try {
      results = batch.length === 1 ? [await this.appendOne(batch[0]!)] : await this.appendBatch(batch);
    } catch (err) {
      for (const q of batch) q.reject(err);
      return;
    }
    costMetrics.appendStatements.inc();
    const written: { q: QueuedAppend; r: Written }[] = [];
    let newest: Checkpoint | null = null;
    results.forEach((r, i) => {
      const q = batch[i]!;
      if (r instanceof Error) {
        q.reject(r);
        return;
      }
      // a cache of states hears of the append before its writer does (docs/event-store.md#the-aggregate-cache)
      for (const fn of this.appended) fn(q.stream, r.nextRevision);
      this.known?.add(q.stream);
      q.resolve({ nextRevision: r.nextRevision, checkpoint: r.checkpoint });
      if (r.fresh) {
        written.push({ q, r });
        if (newest === null || compareCheckpoints(r.checkpoint, newest) > 0) newest = r.checkpoint;
      }
    });
    costMetrics.appends.inc(written.length);
    costMetrics.events.inc(written.reduce((n, w) => n + w.q.events.length, 0));
    // one session and the only writer: the tail takes what was just written, and no reader reads it back
    // (docs/event-store.md#the-log-tail); the notice below then wakes the subscriptions without a refresh
    if (this.o.oneSession && this.o.soleWriter && written.length > 0) this.tail.took(recordedOf(written));
    if (newest !== null) {
      this.signals.publish({
        checkpoint: newest,
        types: [...new Set(written.flatMap((w) => w.q.events.map((e) => e.type)))],
        categories: [...new Set(written.map((w) => categoryOf(w.q.stream)))],
      });
    }
  }

  /**
   * One stream, one statement: the stream's compare-and-set and the insert. A stream of up to `MAX_PLAIN_EVENTS`
   * events goes as a plain statement with one parameter per value; one that does not, and one whose compare-and-set
   * failed there, go through the function, which also tells a replay from a conflict (docs/event-store.md#appending).
   */
  private async appendOne(q: Pending): Promise<Written | WrongExpectedRevisionError> {
    const { stream, events, expectedRevision: expected } = q;
    const texts = textsOf(q);
    const createdAt = this.clock.now();
    let row: OutcomeRow;
    try {
      if (events.length <= MAX_PLAIN_EVENTS) {
        const r = await this.db.executeQuery(plainAppend(q, texts, createdAt));
        const plain = r.rows[0]!;
        // nothing written: the compare-and-set failed, which the function below sorts into a replay or a conflict
        if (plain.revision !== null) return outcome(q, plain, createdAt);
      }
      const r = await sql<OutcomeRow>`select * from append_events(
          ${stream}, ${categoryOf(stream)}, ${modeOf(expected)}, ${typeof expected === 'bigint' ? String(expected) : null}::bigint,
          ${events.map((e) => e.id)}::uuid[], ${events.map((e) => e.type)}::text[],
          ${texts.map((t) => t.data)}::jsonb[],
          ${texts.map((t) => t.metadata)}::jsonb[],
          ${createdAt}::timestamptz)`.execute(this.db);
      row = r.rows[0]!;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // these event ids are stored already, but not as this stream's last append: a replay or a conflict
      const replay = await this.idempotentReplay(this.db, stream, events).catch(conflictOnly);
      if (replay instanceof WrongExpectedRevisionError) return replay;
      if (replay) return { ...replay, fresh: false, createdAt };
      return new WrongExpectedRevisionError(stream, expected, await this.currentRevision(stream));
    }
    return outcome(q, row, createdAt);
  }

  /** Several streams, one statement, one commit; streams are taken in name order by the function. */
  private async appendBatch(batch: readonly Pending[]): Promise<(Written | WrongExpectedRevisionError)[]> {
    // the document as text, around each event's text made once (`textsOf`)
    const doc = batch.map((a) => {
      const texts = textsOf(a);
      const events = a.events.map(
        (e, i) =>
          `{"id":${JSON.stringify(e.id)},"type":${JSON.stringify(e.type)},"data":${texts[i]!.data},"metadata":${texts[i]!.metadata}}`,
      );
      const expected = typeof a.expectedRevision === 'bigint' ? `"${a.expectedRevision}"` : 'null';
      return `{"stream":${JSON.stringify(a.stream)},"category":${JSON.stringify(categoryOf(a.stream))},"mode":"${modeOf(a.expectedRevision)}","expected":${expected},"events":[${events.join(',')}]}`;
    });
    const createdAt = this.clock.now();
    let rows: (OutcomeRow & { idx: number })[];
    try {
      const r = await sql<
        OutcomeRow & { idx: number }
      >`select * from append_events_many(${`[${doc.join(',')}]`}::jsonb, ${createdAt}::timestamptz)`.execute(this.db);
      rows = r.rows;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // an event id of the batch is stored elsewhere: sort it out stream by stream, in order
      const out: (Written | WrongExpectedRevisionError)[] = [];
      for (const a of batch) out.push(await this.appendOne(a));
      return out;
    }
    const out = new Array<Written | WrongExpectedRevisionError>(batch.length);
    for (const row of rows) out[row.idx] = outcome(batch[row.idx]!, row, createdAt);
    return out;
  }

  /** Appending the same event ids again (a client retry) succeeds without writing anything. */
  private async idempotentReplay(db: Kysely<Db>, stream: string, events: readonly NewEvent[]): Promise<AppendResult | null> {
    const existing = await db
      .selectFrom('events')
      .select(['event_id', 'stream_name', 'stream_revision', 'global_position', sql<string>`transaction_id::text`.as('transaction_id')])
      .where(
        'event_id',
        'in',
        events.map((e) => e.id),
      )
      .orderBy('global_position')
      .execute();
    if (existing.length === 0) return null;
    const sameBatch =
      existing.length === events.length && existing.every((r, i) => r.stream_name === stream && r.event_id === events[i]!.id);
    if (!sameBatch) throw new WrongExpectedRevisionError(stream, 'any', await this.currentRevision(stream));
    const last = existing[existing.length - 1]!;
    return {
      nextRevision: BigInt(last.stream_revision),
      checkpoint: makeCheckpoint(BigInt(last.transaction_id), BigInt(last.global_position)),
    };
  }

  private async currentRevision(stream: string): Promise<bigint | 'no_stream'> {
    const row = await this.db.selectFrom('streams').select('revision').where('stream_name', '=', stream).executeTakeFirst();
    return row ? BigInt(row.revision) : 'no_stream';
  }

  /** False when no stream of this name exists, as far as this sole writer knows (docs/event-store.md#streams-known-to-be-new). */
  private mayExist(stream: string): boolean {
    if (!this.known) return true;
    void this.known.fill(async (after, limit) => {
      let q = this.db.selectFrom('streams').select('stream_name').orderBy('stream_name').limit(limit);
      if (after !== null) q = q.where('stream_name', '>', after);
      return (await q.execute()).map((r) => r.stream_name);
    });
    return this.known.mayExist(stream);
  }

  async readStream(stream: string, o: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (!this.mayExist(stream)) return [];
    const whole = o.fromRevision === undefined && o.maxCount === undefined && o.direction !== 'backwards';
    // read with the others asked for in this turn (docs/event-store.md#reading-streams); each caller gets its own copy
    if (this.o.gatherReads && whole) return [...((await this.readTogether([stream])).get(stream) ?? [])];
    const backwards = o.direction === 'backwards';
    let q = this.db.selectFrom('events').select(COLUMNS).where('stream_name', '=', stream);
    if (o.fromRevision !== undefined) q = q.where('stream_revision', backwards ? '<=' : '>=', String(o.fromRevision));
    q = q.orderBy('stream_revision', backwards ? 'desc' : 'asc');
    if (o.maxCount !== undefined) q = q.limit(o.maxCount);
    return (await q.execute()).map(toRecorded);
  }

  async readStreams(names: readonly string[]): Promise<Map<string, RecordedEvent[]>> {
    const out = new Map<string, RecordedEvent[]>(names.map((n) => [n, []]));
    const existing = [...new Set(names)].filter((n) => this.mayExist(n));
    if (existing.length === 0) return out;
    const rows = await this.db
      .selectFrom('events')
      .select(COLUMNS)
      .where('stream_name', 'in', existing)
      .orderBy('stream_name')
      .orderBy('stream_revision')
      .execute();
    for (const r of rows) out.get(r.stream_name)!.push(toRecorded(r));
    return out;
  }

  async readAll(o: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const after = o.after ?? START;
    const maxCount = o.maxCount ?? 1000;
    return (await this.readLog(after, maxCount, o.filter)).events;
  }

  /** From the tail, which also says how far it looked, or from the table when the tail does not reach back that far. */
  private async readLog(
    after: Checkpoint,
    maxCount: number,
    filter?: EventFilter,
  ): Promise<{ events: RecordedEvent[]; through?: Checkpoint }> {
    return (await this.tail.read(after, maxCount, filter)) ?? { events: await this.readTable(after, maxCount, filter) };
  }

  /**
   * A subscription's read: as `readLog`, but a subscription behind the tail reads the table only up to the tail's
   * start, and then moves on to it (docs/event-store.md#the-log-tail).
   */
  private async readForSubscription(
    after: Checkpoint,
    maxCount: number,
    filter?: EventFilter,
  ): Promise<{ events: RecordedEvent[]; through?: Checkpoint; behind?: boolean }> {
    return (
      (await this.tail.read(after, maxCount, filter, true)) ??
      (await this.tail.behind(after, maxCount, filter)) ?? { events: await this.readTable(after, maxCount, filter) }
    );
  }

  /** The log from the table: visible events after a checkpoint (up to `upTo`, inclusive), in checkpoint order (docs/event-store.md). */
  private async readTable(after: Checkpoint, maxCount: number, filter?: EventFilter, upTo?: Checkpoint): Promise<RecordedEvent[]> {
    const [txId, pos] = parseCheckpoint(after);
    const [upToTx, upToPos] = upTo ? parseCheckpoint(upTo) : [0n, 0n];
    const rows = await this.logQuery(filter, upTo !== undefined).execute({
      tx: String(txId),
      pos: String(pos),
      upToTx: String(upToTx),
      upToPos: String(upToPos),
      limit: maxCount,
    });
    return rows.map(toRecorded);
  }

  /**
   * The log's read for a filter, compiled once per filter (docs/event-store.md#compiled-once): the subscriptions read
   * with the same few filters all the time. A filter beyond the first `LOG_QUERIES` is compiled at each read.
   */
  private logQuery(filter: EventFilter | undefined, bounded: boolean) {
    const key = `${bounded ? 'u' : '-'}${filter ? ('eventTypes' in filter ? `t${filter.eventTypes.join(',')}` : `c${filter.streamCategories.join(',')}`) : ''}`;
    const known = this.logQueries.get(key);
    if (known) return known;
    const q = new CompiledOnce(this.db, (db, v: LogReadValues) =>
      db
        .selectFrom('events')
        .select(COLUMNS)
        .where(sql<boolean>`transaction_id < pg_snapshot_xmin(pg_current_snapshot())`)
        .where(sql<boolean>`(transaction_id, global_position) > (${v.tx}::xid8, ${v.pos}::bigint)`)
        .where(filterCondition(filter))
        .$if(bounded, (q) => q.where(sql<boolean>`(transaction_id, global_position) <= (${v.upToTx}::xid8, ${v.upToPos}::bigint)`))
        .orderBy(sql`events.transaction_id`)
        .orderBy('global_position')
        .limit(v.limit),
    );
    if (this.logQueries.size < LOG_QUERIES) this.logQueries.set(key, q);
    return q;
  }

  async countAll(o: { filter?: EventFilter } = {}): Promise<number> {
    const q = this.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where(sql<boolean>`transaction_id < pg_snapshot_xmin(pg_current_snapshot())`)
      .where(filterCondition(o.filter));
    return Number((await q.executeTakeFirstOrThrow()).n);
  }

  async headCheckpoint(): Promise<Checkpoint> {
    const row = await this.db
      .selectFrom('events')
      .select(['global_position', sql<string>`transaction_id::text`.as('transaction_id')])
      .where(sql<boolean>`transaction_id < pg_snapshot_xmin(pg_current_snapshot())`)
      .orderBy(sql`events.transaction_id`, 'desc')
      .orderBy('global_position', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? makeCheckpoint(BigInt(row.transaction_id), BigInt(row.global_position)) : START;
  }

  /** Every event below this checkpoint is visible to readers now: no older transaction is still open. */
  private async horizon(): Promise<Checkpoint> {
    const r = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(this.db);
    return makeCheckpoint(BigInt(r.rows[0]!.xmin), 0n);
  }

  subscribe(o: SubscribeOptions, handler: SubscriptionHandler): Subscription {
    return runSubscriptionLoop({
      after: o.after,
      batchSize: o.batchSize ?? 500,
      pollIntervalMs: this.o.pollIntervalMs ?? 1000,
      filter: o.filter,
      read: (after, maxCount) => this.readForSubscription(after, maxCount, o.filter),
      ...(this.o.oneSession ? {} : { horizon: () => this.horizonTogether([]) }),
      listen: (fn) => this.signals.listen(fn),
      handler,
      lingerMs: this.o.batchLingerMs ?? 0,
      ...(o.name ? { name: o.name } : {}),
      ...(o.lagMs ? { lagMs: o.lagMs } : {}),
      ...(o.lagsOnly ? { lagsOnly: o.lagsOnly } : {}),
      ...(o.onError ? { onError: o.onError } : {}),
    });
  }

  async close(): Promise<void> {
    await this.signals.close();
  }
}

/** A filter as a condition on the events table: its event types, or its stream categories (an empty list matches nothing). */
function filterCondition(filter: EventFilter | undefined): RawBuilder<boolean> {
  if (!filter) return sql<boolean>`true`;
  const [column, values] = 'eventTypes' in filter ? ['event_type', filter.eventTypes] : ['stream_category', filter.streamCategories];
  return values.length ? sql<boolean>`${sql.ref(column)} in (${sql.join(values)})` : sql<boolean>`false`;
}

/** `appendMany` answers a stream's conflict in its place; anything else fails the call. */
const conflictOnly = (err: unknown): WrongExpectedRevisionError => {
  if (err instanceof WrongExpectedRevisionError) return err;
  throw err;
};

const isUniqueViolation = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { code?: string }).code === UNIQUE_VIOLATION;

const parseJson = (v: unknown): Record<string, unknown> => (typeof v === 'string' ? JSON.parse(v) : v) as Record<string, unknown>;

/**
 * The events of fresh appends as a read of the log would give them, in log order: the appends by their last position,
 * each one's events at the positions before it. In one session an append's events take consecutive positions; where
 * they did not, the tail finds the gap and refuses them (`LogTail.took`).
 */
function recordedOf(written: readonly { q: Pending; r: Written }[]): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  const inOrder = written.length === 1 ? written : [...written].sort((a, b) => compareCheckpoints(a.r.checkpoint, b.r.checkpoint));
  for (const { q, r } of inOrder) {
    const [tx, last] = parseCheckpoint(r.checkpoint);
    const n = BigInt(q.events.length);
    const createdAt = r.createdAt.toISOString();
    const texts = textsOf(q);
    q.events.forEach((e, i) => {
      const at = last - n + 1n + BigInt(i);
      const metadata = fromStoredText(texts[i]!.metadata) as EventMetadata;
      out.push({
        id: e.id,
        type: e.type,
        data: upcast(e.type, fromStoredText(texts[i]!.data) as Record<string, unknown>, metadata.schemaVersion ?? 1),
        metadata,
        streamName: q.stream,
        streamRevision: r.nextRevision - n + 1n + BigInt(i),
        globalPosition: at,
        checkpoint: makeCheckpoint(tx, at),
        createdAt,
      });
    });
  }
  return out;
}

function toRecorded(r: Row): RecordedEvent {
  const metadata = parseJson(r.metadata) as EventMetadata;
  const up = upcast(r.event_type, parseJson(r.data), metadata.schemaVersion ?? 1);
  return {
    id: r.event_id,
    type: r.event_type,
    data: up,
    metadata,
    streamName: r.stream_name,
    streamRevision: BigInt(r.stream_revision),
    globalPosition: BigInt(r.global_position),
    checkpoint: makeCheckpoint(BigInt(r.transaction_id), BigInt(r.global_position)),
    createdAt: new Date(r.created_at).toISOString(),
  };
}

export { compareCheckpoints };

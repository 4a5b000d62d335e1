import type { Command, Decider, Event } from '../../domain/shared/types.js';
import type { ClockPort } from '../ports/clock.port.js';
import {
  type Checkpoint,
  type EventMetadata,
  type EventStorePort,
  type NewEvent,
  type RecordedEvent,
  revisionOf,
  WrongExpectedRevisionError,
} from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import type { SnapshotStorePort } from '../ports/snapshot-store.port.js';
import { AggregateCache } from './aggregate-cache.js';
import type { RequestContext } from './context.js';
import { KeyedLock } from './keyed-lock.js';

export const MAX_ATTEMPTS = 3;
/** A load that folds this many events (or more) past the snapshot leaves a new snapshot behind. */
export const SNAPSHOT_EVERY = 100;

/** The metadata every event of a command carries. */
const metadataOf = (ctx: RequestContext, o: ExecuteOptions = {}): EventMetadata => ({
  accountId: o.accountId ?? ctx.accountId,
  correlationId: ctx.correlationId,
  causationId: o.causationId ?? ctx.causationId ?? null,
  requestId: ctx.requestId,
  actor: ctx.actor,
});

/** A command as a caller writes it: the executor adds the metadata (time and acting account). */
export type CommandInput<C> = C extends Command ? Omit<C, 'metadata'> : never;

export type ExecuteResult<E, S> = Readonly<{
  state: S;
  events: E[];
  /** revision of the stream after the command; `no_stream` when nothing was ever written */
  revision: bigint | 'no_stream';
  /** where the appended events sit in the global log (null for a no-op) */
  checkpoint: Checkpoint | null;
}>;

export type ExecuteOptions = Readonly<{
  /** answer only once the read models that show these events have caught up (the caller answers from them) */
  readYourWrites?: boolean;
  /** the account the events belong to, when it is not the acting one (a sub-account billed to its parent) */
  accountId?: string;
  /** the event that caused this command (process managers), recorded as the events' causation id */
  causationId?: string | null;
  /**
   * The caller knows the stream is new: its id was just minted from the `Ids` port, or this command is the first the
   * stream's process writes to it (docs/event-store.md#streams-known-to-be-new). The command is decided on the
   * decider's initial state and appended with `no_stream`, reading nothing; only a decision that appends is taken so
   * (a refusal or a no-op is checked on the stream as read), and a stream that exists after all answers a conflict,
   * after which the command is decided on the stream as read (not counted against its attempts).
   */
  newStream?: boolean;
}>;

/** One command of `executeTogether`: what `execute` takes. */
export type Step = Readonly<{
  decider: Decider<Command, Event, unknown>;
  stream: string;
  input: CommandInput<Command>;
  ctx: RequestContext;
  o?: ExecuteOptions;
}>;

/** A command for `executeTogether`, typed by its decider. */
export const step = <C extends Command, E extends Event, S>(
  decider: Decider<C, E, S>,
  stream: string,
  input: CommandInput<C>,
  ctx: RequestContext,
  o?: ExecuteOptions,
): Step => ({ decider: decider as unknown as Step['decider'], stream, input: input as CommandInput<Command>, ctx, ...(o ? { o } : {}) });

/**
 * Commands decided in turn: the events of those taken, the index of the command each event came from, the state
 * they leave, and each command's refusal (undefined if taken).
 */
type InOrder<E, S> = { events: E[]; from: number[]; next: S; refusals: unknown[] };

/** Each command decided on the state the ones before it leave; a refused one is left out, its error kept at its place. */
function decideInOrder<C extends Command, E extends Event, S>(decider: Decider<C, E, S>, commands: readonly C[], state: S): InOrder<E, S> {
  const events: E[] = [];
  const from: number[] = [];
  const refusals: unknown[] = [];
  let next = state;
  for (const [i, command] of commands.entries()) {
    let decided: E[];
    try {
      decided = decider.decide(command, next);
    } catch (err) {
      refusals.push(err);
      continue;
    }
    refusals.push(undefined);
    next = decided.reduce(decider.evolve, next);
    for (const e of decided) {
      events.push(e);
      from.push(i);
    }
  }
  return { events, from, next, refusals };
}

/** A decision on a state that may be stale is taken only when it appends and refuses nothing; else the stream is read. */
const takenWhenGuarded = (d: InOrder<Event, unknown>): boolean => d.events.length > 0 && d.refusals.every((r) => r === undefined);

/**
 * The one command path (docs/architecture.md, "How a write flows"): build the time, the acting account and the
 * event metadata; load the stream and fold it; decide; append with the revision read. A conflict means another
 * writer got there first: reload and decide again, at most MAX_ATTEMPTS times; a decision that no longer holds
 * after the reload surfaces as the decider's own domain error. Read models are waited for only when the caller
 * answers from them. Within one process, writes to one stream queue behind each other, so a hot stream (a
 * number's daily counters under a burst of sends) meets conflicts only from other processes.
 */
export class CommandExecutor {
  private readonly streamLock = new KeyedLock();
  private readonly cache: AggregateCache;

  constructor(
    private readonly store: EventStorePort,
    private readonly ids: IdsPort,
    private readonly clock: ClockPort,
    private readonly readModels: ReadModelsPort,
    private readonly snapshots?: SnapshotStorePort,
    /** how many aggregates to keep in memory (docs/event-store.md#the-aggregate-cache); 0: none */
    cacheSize = 0,
  ) {
    const sole = store.soleWriter;
    this.cache = new AggregateCache(cacheSize, sole !== null);
    if (sole && cacheSize > 0) sole.onAppended((stream, revision) => this.cache.appended(stream, revision));
  }

  /** The current time as the domain records it. */
  now(): string {
    return this.clock.now().toISOString();
  }

  async execute<C extends Command, E extends Event, S>(
    decider: Decider<C, E, S>,
    stream: string,
    input: CommandInput<C>,
    ctx: RequestContext,
    o: ExecuteOptions = {},
  ): Promise<ExecuteResult<E, S>> {
    const { refusals, ...result } = await this.executeInOrder(decider, stream, [input], ctx, o);
    if (refusals[0] !== undefined) throw refusals[0];
    return result;
  }

  /**
   * Commands on one stream that came together, in one append (docs/event-store.md#commands-in-order): each is
   * decided in turn on the state the ones before it leave, as `execute` would decide it after them. A command
   * refused is left out, its error in `refusals` at its place (undefined for one taken), and the others are still
   * decided; the events of all of them go in one append, so they land together or not at all. A conflict decides
   * them all again on the stream as read, as `execute` does one command.
   */
  async executeInOrder<C extends Command, E extends Event, S>(
    decider: Decider<C, E, S>,
    stream: string,
    inputs: readonly CommandInput<C>[],
    ctx: RequestContext,
    o: ExecuteOptions = {},
  ): Promise<ExecuteResult<E, S> & { refusals: readonly unknown[] }> {
    const accountId = o.accountId ?? ctx.accountId;
    const metadata = metadataOf(ctx, o);
    /** a conflict met by a decision on the cached state, or on a stream taken as new, costs no attempt: the next one reads the stream */
    let staleCache = false;
    let takenAsNew = o.newStream === true;
    for (let attempt = 1; ; attempt++) {
      staleCache = false;
      try {
        const result = await this.streamLock.run(stream, async () => {
          const now = this.now();
          const commands = inputs.map((input) => ({ ...input, metadata: { now, accountId } }) as C);
          const mark = this.cache.mark();
          const kept = this.decideOnKept(decider, stream, commands) ?? (takenAsNew ? this.decideOnNew(decider, commands) : null);
          takenAsNew = false;
          const usedCache = kept !== null;
          const { state, revision } = kept ?? (await this.load(decider, stream));
          const { events: newEvents, next, refusals } = kept ?? decideInOrder(decider, commands, state);
          if (newEvents.length === 0) return { state, events: [], revision, checkpoint: null, refusals };
          let r: Awaited<ReturnType<EventStorePort['appendToStream']>>;
          try {
            r = await this.store.appendToStream(
              stream,
              newEvents.map((e) => ({ ...e, id: this.ids.uuid(), metadata })),
              { expectedRevision: revision },
            );
          } catch (err) {
            this.cache.delete(stream);
            staleCache = usedCache && err instanceof WrongExpectedRevisionError;
            throw err;
          }
          this.cache.keep(stream, { decider, state: next, revision: r.nextRevision }, mark);
          return { state: next, events: newEvents, revision: r.nextRevision, checkpoint: r.checkpoint, refusals };
        });
        if (o.readYourWrites && result.checkpoint)
          await this.readModels.waitFor(
            result.checkpoint,
            result.events.map((e) => e.type),
          );
        return result;
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
        if (staleCache) attempt--;
        else if (attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * Commands on different streams that a use case writes together (docs/event-store.md#commands-written-together).
   * Where this process is the store's sole writer, each is decided in order on its stream's state with every
   * stream's lock held, a refusal of any is thrown before anything is written, and their appends go in one
   * `appendMany` (one statement and one commit on the PostgreSQL store). Elsewhere, where another writer may move a
   * stream meanwhile, they are executed one after the other, each the usual way. Either way, when a command fails
   * after earlier ones were written (only where another writer moved its stream, or a conflict met anyway), `undo`
   * hears the error and the commands written, before the error is thrown.
   */
  async executeTogether(
    steps: readonly Step[],
    undo?: (err: unknown, written: readonly Step[]) => Promise<void>,
  ): Promise<ExecuteResult<Event, unknown>[]> {
    if (new Set(steps.map((s) => s.stream)).size !== steps.length) throw new Error('executeTogether: one command per stream');
    const landed: (ExecuteResult<Event, unknown> | null)[] =
      this.store.soleWriter !== null && steps.length > 1
        ? await this.holding(steps.map((s) => s.stream).sort(), () => this.appendTogether(steps))
        : steps.map(() => null);
    const out: ExecuteResult<Event, unknown>[] = [];
    for (const [i, r] of landed.entries()) {
      const s = steps[i]!;
      try {
        if (r === null) out.push(await this.execute(s.decider, s.stream, s.input, s.ctx, s.o));
        else {
          if (s.o?.readYourWrites) await this.settleResult(r);
          out.push(r);
        }
      } catch (err) {
        // those before it, and it and those after it that the one append wrote (its own read-your-writes failed)
        const written = steps.filter((_, j) => j < i || landed[j] !== null);
        if (undo && written.length > 0) await undo(err, written);
        throw err;
      }
    }
    return out;
  }

  /** Runs `work` holding the locks of these streams, taken in the order given (sorted, so no two callers deadlock). */
  private holding<T>(streams: readonly string[], work: () => Promise<T>, i = 0): Promise<T> {
    return i === streams.length ? work() : this.streamLock.run(streams[i]!, () => this.holding(streams, work, i + 1));
  }

  /** `executeTogether`'s decisions and their one append; null for a stream whose append met a conflict. */
  private async appendTogether(steps: readonly Step[]): Promise<(ExecuteResult<Event, unknown> | null)[]> {
    const mark = this.cache.mark();
    const decided: { step: Step; state: unknown; revision: bigint | 'no_stream'; events: Event[]; next: unknown }[] = [];
    for (const step of steps) {
      const { state, revision } = await this.state(step.decider, step.stream);
      const command = { ...step.input, metadata: { now: this.now(), accountId: step.o?.accountId ?? step.ctx.accountId } } as Command;
      const events = step.decider.decide(command, state);
      decided.push({ step, state, revision, events, next: events.reduce(step.decider.evolve, state) });
    }
    const writing = decided.filter((d) => d.events.length > 0);
    const results =
      writing.length === 0
        ? []
        : await this.store.appendMany(
            writing.map((d) => ({
              stream: d.step.stream,
              events: d.events.map((e) => ({ ...e, id: this.ids.uuid(), metadata: metadataOf(d.step.ctx, d.step.o) })),
              expectedRevision: d.revision,
            })),
          );
    return decided.map((d) => {
      const r = results[writing.indexOf(d)];
      if (r instanceof WrongExpectedRevisionError) {
        this.cache.delete(d.step.stream);
        return null;
      }
      if (!r) return { state: d.state, events: [], revision: d.revision, checkpoint: null };
      this.cache.keep(d.step.stream, { decider: d.step.decider, state: d.next, revision: r.nextRevision }, mark);
      return { state: d.next, events: d.events, revision: r.nextRevision, checkpoint: r.checkpoint };
    });
  }

  /**
   * A decision on the state the cache keeps for `stream` (docs/event-store.md#the-aggregate-cache), or null to decide
   * on the stream as read: exact, the kept state is the stream's, so whatever it decides (refusals included)
   * stands; guarded, only a decision that appends and refuses nothing is taken, and its append names the revision
   * the state reflects.
   */
  private decideOnKept<C extends Command, E extends Event, S>(
    decider: Decider<C, E, S>,
    stream: string,
    commands: readonly C[],
  ): (InOrder<E, S> & { state: S; revision: bigint | 'no_stream' }) | null {
    const kept = this.cache.get(stream, decider);
    if (!kept) return null;
    const state = kept.state as S;
    const decided = decideInOrder(decider, commands, state);
    if (this.cache.exact || takenWhenGuarded(decided)) return { state, revision: kept.revision, ...decided };
    return null;
  }

  /**
   * A decision on the initial state of a stream the caller knows is new (`newStream`), taken only when it appends
   * and refuses nothing: its append names `no_stream`, which a stream that exists after all answers with a conflict.
   */
  private decideOnNew<C extends Command, E extends Event, S>(
    decider: Decider<C, E, S>,
    commands: readonly C[],
  ): (InOrder<E, S> & { state: S; revision: 'no_stream' }) | null {
    const state = decider.initialState();
    const decided = decideInOrder(decider, commands, state);
    return takenWhenGuarded(decided) ? { state, revision: 'no_stream', ...decided } : null;
  }

  /**
   * Many commands at once, for reactors that move many aggregates per batch (docs/event-store.md#appending): the
   * streams' states are taken from the cache where it is exact, the others read in one query (`statesOf`), each
   * stream's commands are decided in order on its state, and every stream's
   * new events go in one `appendMany`. A stream whose append meets a conflict is executed again on its own, the
   * usual way (reload, decide, retry). A command whose decision fails is skipped and its error thrown once the
   * others are written, so a reactor's retry of the batch finds them done.
   */
  async executeMany<C extends Command, E extends Event, S>(
    decider: Decider<C, E, S>,
    items: readonly Readonly<{ stream: string; input: CommandInput<C>; ctx: RequestContext }>[],
    o: Readonly<{
      /** told of each stream this call appended to, with its state and revision after it, before any refusal is thrown */
      written?: (stream: string, at: Readonly<{ state: S; revision: bigint }>) => void;
    }> = {},
  ): Promise<void> {
    if (items.length === 0) return;
    const byStream = new Map<string, (typeof items)[number][]>();
    for (const it of items) byStream.set(it.stream, [...(byStream.get(it.stream) ?? []), it]);
    const mark = this.cache.mark();
    const states = await this.statesOf(decider, [...byStream.keys()]);
    const now = this.now();
    let failure: unknown = null;
    const appends: {
      stream: string;
      revision: bigint | 'no_stream';
      events: NewEvent[];
      state: S;
      items: (typeof items)[number][];
    }[] = [];
    for (const [stream, its] of byStream) {
      const at = states.get(stream)!;
      const commands = its.map((it) => ({ ...it.input, metadata: { now, accountId: it.ctx.accountId } }) as C);
      const { events, from, next, refusals } = decideInOrder(decider, commands, at.state);
      for (const err of refusals) if (err !== undefined) failure ??= err;
      // each event carries the metadata of the item whose command decided it
      const fresh = events.map((e, k): NewEvent => ({ ...e, id: this.ids.uuid(), metadata: metadataOf(its[from[k]!]!.ctx) }));
      if (fresh.length > 0) appends.push({ stream, revision: at.revision, events: fresh, state: next, items: its });
    }
    const results = await this.store.appendMany(appends.map((a) => ({ stream: a.stream, events: a.events, expectedRevision: a.revision })));
    for (const [i, r] of results.entries()) {
      const a = appends[i]!;
      if (r instanceof WrongExpectedRevisionError) this.cache.delete(a.stream);
      else {
        this.cache.keep(a.stream, { decider, state: a.state, revision: r.nextRevision }, mark);
        o.written?.(a.stream, { state: a.state, revision: r.nextRevision });
      }
    }
    // another writer moved these streams since the read: their commands go the usual way, one by one
    for (const [i, r] of results.entries())
      if (r instanceof WrongExpectedRevisionError)
        for (const it of appends[i]!.items)
          await this.execute(decider, it.stream, it.input, it.ctx).then(
            (done) => {
              if (done.events.length > 0 && done.revision !== 'no_stream')
                o.written?.(it.stream, { state: done.state, revision: done.revision });
            },
            (err: unknown) => (failure ??= err),
          );
    if (failure !== null) throw failure;
  }

  /**
   * The states of these streams now, for a batch: those the cache keeps where it is exact
   * (docs/event-store.md#the-aggregate-cache), the others read in one statement, folded whole and kept.
   */
  async statesOf<C, E extends Event, S>(
    decider: Decider<C, E, S>,
    streams: readonly string[],
  ): Promise<Map<string, { state: S; revision: bigint | 'no_stream' }>> {
    const out = new Map<string, { state: S; revision: bigint | 'no_stream' }>();
    const missing: string[] = [];
    for (const stream of new Set(streams)) {
      const cached = this.cache.exact ? this.cache.get(stream, decider) : undefined;
      if (cached) out.set(stream, { state: cached.state as S, revision: cached.revision });
      else missing.push(stream);
    }
    if (missing.length === 0) return out;
    const mark = this.cache.mark();
    const read = await this.store.readStreams(missing);
    for (const stream of missing) {
      const events = (read.get(stream) ?? []) as RecordedEvent<E>[];
      const at = { state: events.reduce<S>(decider.evolve, decider.initialState()), revision: revisionOf(events) };
      this.cache.keep(stream, { decider, ...at }, mark);
      out.set(stream, at);
    }
    return out;
  }

  /**
   * Reads a stream and folds it with the decider: the aggregate's current state, its revision, and the events
   * folded. An aggregate that keeps snapshots (docs/event-store.md#snapshots) starts from its snapshot, so its
   * events are those after it; the load that folded many events leaves a newer snapshot behind.
   */
  async load<C, E extends Event, S>(decider: Decider<C, E, S>, stream: string) {
    const mark = this.cache.mark();
    const codec = this.snapshots ? decider.snapshot : undefined;
    const stored = codec ? await this.snapshots!.load(stream) : null;
    const snap = stored && stored.version === codec!.version ? stored : null;
    // the store returns untyped events; the stream name fixes which decider's events they are
    const events = (await this.store.readStream(stream, snap ? { fromRevision: snap.revision + 1n } : {})) as RecordedEvent<E>[];
    const state = events.reduce<S>(decider.evolve, snap ? codec!.decode(snap.state) : decider.initialState());
    const last = events.at(-1);
    const revision: bigint | 'no_stream' = last ? last.streamRevision : snap ? snap.revision : 'no_stream';
    if (codec && last && events.length >= SNAPSHOT_EVERY)
      // a cache: losing the race with another process, or failing, only means folding more next time
      void this.snapshots!.save(stream, { revision: last.streamRevision, version: codec.version, state: codec.encode(state) }).catch(
        () => undefined,
      );
    this.cache.keep(stream, { decider, state, revision }, mark);
    return { state, revision, events };
  }

  /**
   * An aggregate's state now, for a decision outside `execute` (a check before a command, a process step): the
   * kept state where the cache is exact (docs/event-store.md#the-aggregate-cache), else the stream as read.
   */
  async state<C, E extends Event, S>(decider: Decider<C, E, S>, stream: string): Promise<{ state: S; revision: bigint | 'no_stream' }> {
    const cached = this.cache.exact ? this.cache.get(stream, decider) : undefined;
    if (cached) return { state: cached.state as S, revision: cached.revision };
    const { state, revision } = await this.load(decider, stream);
    return { state, revision };
  }

  /** Read-your-writes for events written outside `execute` (e.g. a process manager's outcome awaited by a request). */
  async settle(events: readonly RecordedEvent[]): Promise<void> {
    const last = events.at(-1);
    if (last) await this.readModels.waitFor(last.checkpoint, [...new Set(events.map((e) => e.type))]);
  }

  /** The same for what `execute` appended without waiting: its result's events, at its checkpoint. */
  async settleResult(r: Pick<ExecuteResult<Event, unknown>, 'events' | 'checkpoint'>): Promise<void> {
    if (r.checkpoint) await this.readModels.waitFor(r.checkpoint, [...new Set(r.events.map((e) => e.type))]);
  }
}

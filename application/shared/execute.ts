import type { Command, Decider, Event } from '../../domain/shared/types.js';
import type { ClockPort } from '../ports/clock.port.js';
import {
  type Checkpoint,
  type EventMetadata,
  type EventStorePort,
  type RecordedEvent,
  revisionOf,
  WrongExpectedRevisionError,
} from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import type { RequestContext } from './context.js';
import { KeyedLock } from './keyed-lock.js';

export const MAX_ATTEMPTS = 3;

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
}>;

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

  constructor(
    private readonly store: EventStorePort,
    private readonly ids: IdsPort,
    private readonly clock: ClockPort,
    private readonly readModels: ReadModelsPort,
  ) {}

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
    const accountId = o.accountId ?? ctx.accountId;
    const metadata: EventMetadata = {
      accountId,
      correlationId: ctx.correlationId,
      causationId: o.causationId ?? ctx.causationId ?? null,
      requestId: ctx.requestId,
      actor: ctx.actor,
    };
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.streamLock.run(stream, async () => {
          const command = { ...input, metadata: { now: this.now(), accountId } } as C;
          const { state, revision } = await this.load(decider, stream);
          const newEvents = decider.decide(command, state);
          if (newEvents.length === 0) return { state, events: [], revision, checkpoint: null };
          const r = await this.store.appendToStream(
            stream,
            newEvents.map((e) => ({ ...e, id: this.ids.uuid(), metadata })),
            { expectedRevision: revision },
          );
          return { state: newEvents.reduce(decider.evolve, state), events: newEvents, revision: r.nextRevision, checkpoint: r.checkpoint };
        });
        if (o.readYourWrites && result.checkpoint)
          await this.readModels.waitFor(
            result.checkpoint,
            result.events.map((e) => e.type),
          );
        return result;
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }

  /** Reads a stream and folds it with the decider: the aggregate's current state and its events. */
  async load<C, E extends Event, S>(decider: Decider<C, E, S>, stream: string) {
    // the store returns untyped events; the stream name fixes which decider's events they are
    const events = (await this.store.readStream(stream)) as RecordedEvent<E>[];
    return { state: events.reduce<S>(decider.evolve, decider.initialState()), revision: revisionOf(events), events };
  }

  /** Read-your-writes for events written outside `execute` (e.g. a process manager's outcome awaited by a request). */
  async settle(events: readonly RecordedEvent[]): Promise<void> {
    const last = events.at(-1);
    if (last) await this.readModels.waitFor(last.checkpoint, [...new Set(events.map((e) => e.type))]);
  }
}

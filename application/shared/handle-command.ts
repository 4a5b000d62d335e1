import type { Decider, Event } from '../../domain/shared/types.js';
import {
  WrongExpectedRevisionError, revisionOf,
  type Checkpoint, type EventMetadata, type EventStorePort, type RecordedEvent,
} from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';

export const MAX_ATTEMPTS = 3;

export type HandleResult<E, S> = Readonly<{
  state: S;
  events: E[];
  /** revision of the stream after the command; `no_stream` when nothing was ever written */
  revision: bigint | 'no_stream';
  /** where the appended events sit in the global log (null for a no-op) */
  checkpoint: Checkpoint | null;
}>;

/**
 * Load, decide, append with the revision read (STYLE.md R6). A conflict means another writer got there
 * first: reload and decide again, at most MAX_ATTEMPTS times; a decision that no longer holds after the
 * reload surfaces as the decider's own domain error.
 */
export async function handleCommand<C, E extends Event, S>(
  deps: { store: EventStorePort; ids: IdsPort },
  decider: Decider<C, E, S>,
  stream: string,
  command: C,
  metadata: EventMetadata,
): Promise<HandleResult<E, S>> {
  for (let attempt = 1; ; attempt++) {
    const { state, revision } = await loadAggregate(deps.store, decider, stream);
    const newEvents = decider.decide(command, state);
    if (newEvents.length === 0) return { state, events: [], revision, checkpoint: null };
    try {
      const r = await deps.store.appendToStream(
        stream,
        newEvents.map((e) => ({ ...e, id: deps.ids.uuid(), metadata })),
        { expectedRevision: revision },
      );
      return { state: newEvents.reduce(decider.evolve, state), events: newEvents, revision: r.nextRevision, checkpoint: r.checkpoint };
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw err;
    }
  }
}

export async function loadAggregate<C, E extends Event, S>(store: EventStorePort, decider: Decider<C, E, S>, stream: string) {
  const events = (await store.readStream(stream)) as unknown as RecordedEvent<E>[];
  return { state: events.reduce<S>(decider.evolve, decider.initialState()), revision: revisionOf(events), events };
}

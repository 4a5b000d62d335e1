import { DomainError, type ErrorCode } from '../../domain/shared/errors.js';
import type { Decider, Event } from '../../domain/shared/types.js';
import type { EventStorePort, RecordedEvent } from '../ports/event-store.port.js';

/**
 * Audit replay (docs/audit.md): the history of a resource (a message, a call, a conversation, a webhook delivery, …)
 * is its event stream, read as it is stored and folded with the aggregate's own `evolve`, so "what happened" and
 * "what it was at 10:02" come from the facts themselves rather than from a read model. This is the one query path
 * that reads the event store: the history IS the stream, and no projection of it could say more. Which resources have
 * a history is what the capabilities contribute: each defines its own view (`defineHistory`) beside its decider.
 */

/** One step of a history: the fact as recorded, who did it and why, and the resource's status once it applied. */
export type HistoryEntry = Readonly<{
  /** 1, 2, 3, … across the whole history */
  seq: number;
  stream: string;
  revision: number;
  eventId: string;
  type: string;
  /** when the fact was recorded */
  time: string;
  /** who did it: `key:<keyId>`, `admin`, `cli`, `system:<component>`, `anonymous` */
  actor: string;
  requestId: string | null;
  correlationId: string;
  /** the event that caused this one (a process manager's reaction), if any */
  causationId: string | null;
  /** the resource's status after this step */
  status: string;
  data: Readonly<Record<string, unknown>>;
}>;

export type History = Readonly<{
  kind: string;
  id: string;
  stream: string;
  /** the instant asked for (`?at=`), or null for now */
  at: string | null;
  /** the status as of `at` (or now); null when it did not exist yet then */
  status: string | null;
  /** the record as of `at`, folded from the stream; null when it did not exist yet then */
  record: Readonly<Record<string, unknown>> | null;
  events: readonly HistoryEntry[];
}>;

/** Who reads: an account (its own resources only) or the operator (any). */
export type Reader = { accountId: string } | 'operator';

/**
 * How one kind of history reads: its stream (whose category is the kind), its decider, how to tell its account, and a
 * view that follows the aggregate's state through the events (the record shown as of an instant). `step` gets the
 * state `evolve` produced.
 */
export type HistoryDefinition<E extends Event, S, V extends Readonly<Record<string, unknown>>> = Readonly<{
  /** the kind, which is also its streams' category (`message` for `message-<id>`) */
  kind: string;
  what: string;
  notFound: ErrorCode;
  stream: (id: string) => string;
  decider: Pick<Decider<unknown, E, S>, 'initialState' | 'evolve'>;
  /** the account the resource belongs to, from its folded state or its first event */
  accountOf: (s: S, first: RecordedEvent) => string | null;
  initial: (id: string) => V;
  step: (v: V, e: RecordedEvent<E>, s: S) => V;
  status: (v: V, s: S) => string | null;
  /** steps of other streams the history shows first (a message's record on its conversation), and how they move the view */
  lead?: Readonly<{
    events: (store: EventStorePort, who: Reader, id: string, own: readonly RecordedEvent<E>[]) => Promise<RecordedEvent[]>;
    step: (v: V, e: RecordedEvent) => V;
  }>;
}>;

/** One kind of history, whatever its aggregate's types: what a capability contributes. */
export type HistoryView = Readonly<{
  kind: string;
  read: (store: EventStorePort, who: Reader, id: string, at: string | null) => Promise<History>;
}>;

const entry = (e: RecordedEvent, seq: number, status: string | null): HistoryEntry => ({
  seq,
  stream: e.streamName,
  revision: Number(e.streamRevision),
  eventId: e.id,
  type: e.type,
  time: e.createdAt,
  actor: e.metadata.actor,
  requestId: e.metadata.requestId,
  correlationId: e.metadata.correlationId,
  causationId: e.metadata.causationId,
  status: status ?? 'none',
  data: e.data,
});

/** A kind of history from its definition: its stream read, folded and shown as of an instant. */
export function defineHistory<E extends Event, S, V extends Readonly<Record<string, unknown>>>(a: HistoryDefinition<E, S, V>): HistoryView {
  return {
    kind: a.kind,
    async read(store, who, id, at) {
      // the stream name fixes which aggregate's events these are
      const own = (await store.readStream(a.stream(id))) as readonly RecordedEvent<E>[];
      const lead = a.lead ? await a.lead.events(store, who, id, own) : [];
      const first = lead[0] ?? own[0];
      const notFound = () => new DomainError(a.notFound, `${a.what} not found`);
      if (!first) throw notFound();
      const now = own.reduce(a.decider.evolve, a.decider.initialState());
      if (who !== 'operator' && a.accountOf(now, own[0] ?? first) !== who.accountId) throw notFound();

      const until = at === null ? null : Date.parse(at);
      const shown = (e: RecordedEvent) => until === null || Date.parse(e.createdAt) <= until;
      let state = a.decider.initialState();
      let view = a.initial(id);
      const events: HistoryEntry[] = [];
      for (const e of lead.filter(shown)) {
        view = a.lead ? a.lead.step(view, e) : view;
        events.push(entry(e, events.length + 1, a.status(view, state)));
      }
      for (const e of own.filter(shown)) {
        state = a.decider.evolve(state, e);
        view = a.step(view, e, state);
        events.push(entry(e, events.length + 1, a.status(view, state)));
      }
      const existed = events.length > 0;
      return {
        kind: a.kind,
        id,
        stream: a.stream(id),
        at,
        status: existed ? a.status(view, state) : null,
        record: existed ? view : null,
        events,
      };
    },
  };
}

/** Reads histories from the event store (docs/audit.md), of the kinds the capabilities contribute. */
export class HistoryService {
  private readonly views: ReadonlyMap<string, HistoryView>;

  constructor(
    private readonly store: EventStorePort,
    views: readonly HistoryView[],
  ) {
    this.views = new Map(views.map((v) => [v.kind, v]));
    if (this.views.size !== views.length) throw new Error(`two history views share a kind: ${views.map((v) => v.kind).join(', ')}`);
  }

  get kinds(): readonly string[] {
    return [...this.views.keys()];
  }

  /** Which kind of history reads a stream (its category), and the resource's id; null for a stream without one. */
  ofStream(stream: string): { kind: string; id: string } | null {
    const i = stream.indexOf('-');
    if (i < 0 || !this.views.has(stream.slice(0, i))) return null;
    return { kind: stream.slice(0, i), id: stream.slice(i + 1) };
  }

  /**
   * The history of one resource of the account, every event in order, or as of `at` (the events recorded at or
   * before that instant). Another account's resource, and an unknown id, answer the kind's 404.
   */
  async history(accountId: string, kind: string, id: string, at: string | null = null): Promise<History> {
    return this.view(kind).read(this.store, { accountId }, id, at);
  }

  /** The same for the operator (`npm run cli -- history`): any account's resource. */
  async forOperator(kind: string, id: string, at: string | null = null): Promise<History> {
    return this.view(kind).read(this.store, 'operator', id, at);
  }

  private view(kind: string): HistoryView {
    const v = this.views.get(kind);
    if (!v) throw new Error(`no history of ${kind}`);
    return v;
  }
}

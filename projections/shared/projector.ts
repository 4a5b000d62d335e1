import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { Event } from '../../domain/shared/types.js';
import type { KeptRows } from './kept-rows.js';
import type { ReadDb } from './read-db.js';

/**
 * A projector turns events into read-model rows. It declares the event types it handles and the tables it
 * owns (for rebuilds); `apply` runs inside the batch transaction and must be idempotent per event, which
 * every projector gets by storing the stream revision a row reflects and writing only where the stored one
 * is older (`where revision < :rev`).
 */
export interface Projector {
  readonly name: string;
  readonly handles: ReadonlySet<string>;
  readonly tables: readonly (keyof ReadDb & string)[];
  /**
   * A read model that no request waits on (analytics) may lag: its projector reads its events `PROJECTION_LAG_MS`
   * after the append that woke it, in batches, off the path of the requests and deliveries; read-your-writes does not
   * wait for it (docs/event-store.md#lagging-projectors).
   */
  readonly lags?: boolean;
  /**
   * Of a read model that requests do wait on, the event types that may lag as `lags` says: their projection waits
   * `PROJECTION_LAG_MS`, unless an event of another of its types comes, which is read at once and takes them with it;
   * read-your-writes does not wait for a write of only these (docs/event-store.md#lagging-projectors).
   */
  readonly lagsOn?: ReadonlySet<string>;
  /**
   * Its batches read before they write and never use what a write answers, so embedded its writes and checkpoint
   * can go as one message (docs/event-store.md#pipelined-batches); a batch that does otherwise is detected and
   * applied the usual way.
   */
  readonly pipelined?: boolean;
  /**
   * The name under which a committed batch tells this process's listeners of an event of it, where a listener must
   * tell some events of one type apart (the delivery worker: a delivery scheduled with its first attempt already
   * claimed puts nothing on the timeline to claim); by default the event's type (docs/event-store.md#wake-ups).
   */
  readonly tells?: (e: RecordedEvent) => string;
  /**
   * Its batches keep the rows they wrote for its next batches in this process, at most this many
   * (docs/event-store.md#kept-rows): the engine gives each live run of it a `KeptRows`, a rebuild none.
   */
  readonly keepsRows?: { readonly maxEntries: number };
  apply(db: Kysely<ReadDb>, event: RecordedEvent): Promise<void>;
  /**
   * Applies a batch (in log order) inside the batch's transaction, with the same result as `apply` on each
   * event in turn; set-based where the projector defines `batch`, one event at a time otherwise. `kept`: the rows
   * its earlier batches in this process wrote, where it `keepsRows`.
   */
  applyBatch(db: Kysely<ReadDb>, events: readonly RecordedEvent[], kept?: KeptRows<unknown>): Promise<void>;
}

/** A projector written by hand (tests, tools) that applies a batch one event at a time. */
export const eventByEvent = (p: Omit<Projector, 'applyBatch'>): Projector => ({
  ...p,
  async applyBatch(db, events) {
    for (const e of events) if (p.handles.has(e.type)) await p.apply(db, e);
  },
});

/** The handler of one event type: receives the event already narrowed to that member of the union. */
export type ProjectorHandler<E extends Event> = (db: Kysely<ReadDb>, e: RecordedEvent<E>) => Promise<void>;

/**
 * One handler per member of the union `E`, keyed by event type. Every key is required, so an event added to
 * the union without a handler here is a compile error; an event that only moves the row's revision gets an
 * explicit handler that says so.
 */
export type ProjectorHandlers<E extends Event> = { readonly [K in E['type']]: ProjectorHandler<Extract<E, { type: K }>> };

/**
 * Builds a projector from its handlers. The handled types are the handlers' keys, so they are exactly the
 * types of the union the projector names (a projector that reads part of a union names that part:
 * `defineProjector<Extract<WebhookDeliveryEvent, { type: 'A' | 'B' }>>`).
 */
export function defineProjector<E extends Event, R = never>(d: {
  readonly name: string;
  readonly tables: readonly (keyof ReadDb & string)[];
  readonly on: ProjectorHandlers<E>;
  /** its read model may lag (see `Projector.lags`) */
  readonly lags?: boolean;
  /** these of its event types may lag (see `Projector.lagsOn`) */
  readonly lagsOn?: readonly E['type'][];
  /** its batches read before they write (see `Projector.pipelined`) */
  readonly pipelined?: boolean;
  /** how its batches name their events to the process's listeners (see `Projector.tells`) */
  readonly tells?: (e: RecordedEvent<E>) => string;
  /** its batches keep the rows they wrote, at most this many (see `Projector.keepsRows`) */
  readonly keepsRows?: { readonly maxEntries: number };
  /**
   * Optional set-based form of the handlers for a whole batch (docs/event-store.md#projectors-and-checkpoints):
   * a few statements per batch instead of a few per event. It must leave the tables exactly as the handlers
   * applied one by one would; a projector that has one usually makes each handler the batch of one event.
   */
  readonly batch?: (db: Kysely<ReadDb>, events: readonly RecordedEvent<E>[], kept?: KeptRows<R>) => Promise<void>;
}): Projector {
  // The one narrowing: the engine hands over events as the wide `RecordedEvent`, and the lookup by
  // `event.type` below is what guarantees that the handler stored under key K only ever receives events of
  // type K, as its parameter type declares. TypeScript cannot relate a runtime key to a mapped type's member.
  const handlers = d.on as unknown as Readonly<Record<string, ProjectorHandler<Event>>>;
  const handles: ReadonlySet<string> = new Set(Object.keys(handlers));
  // an event of a handled type is one of E: the handlers' keys are exactly E's types
  const isMine = (e: RecordedEvent): e is RecordedEvent<E> => handles.has(e.type);
  return {
    name: d.name,
    handles,
    tables: d.tables,
    ...(d.lags ? { lags: true } : {}),
    ...(d.lagsOn ? { lagsOn: new Set<string>(d.lagsOn) } : {}),
    ...(d.pipelined ? { pipelined: true } : {}),
    ...(d.tells ? { tells: (e: RecordedEvent) => (isMine(e) ? d.tells!(e) : e.type) } : {}),
    ...(d.keepsRows ? { keepsRows: d.keepsRows } : {}),
    async apply(db, event) {
      if (!handles.has(event.type)) return;
      await handlers[event.type]!(db, event);
    },
    async applyBatch(db, events, kept) {
      const mine = events.filter(isMine);
      if (mine.length === 0) return;
      // the engine makes a projector's KeptRows for it alone (`keepsRows`), so it holds this projector's rows: R
      if (d.batch) await d.batch(db, mine, kept as KeptRows<R> | undefined);
      else for (const e of mine) await handlers[e.type]!(db, e);
    },
  };
}

/** A row's `revision` column value for an event: the stream revision the row reflects after it. */
export const rowRevision = (e: RecordedEvent): string => String(e.streamRevision);

/** What a batch did that a pipeline cannot carry: the batch is applied the usual way, in a transaction. */
export class NotPipelined extends Error {}

/**
 * The count of rows a write kept by a pipelined batch answers (it has not run): a handler that asks how many rows a
 * write moved (`matched`) finds this and ends the recording, instead of reading 0 and going on as if nothing matched.
 */
export const UNANSWERED = -1n;

/** Runs a guarded update; true when it matched a row, false when the row is missing or already past the event. */
export const matched = async (q: { executeTakeFirst(): Promise<{ numUpdatedRows: bigint }> }): Promise<boolean> => {
  const n = (await q.executeTakeFirst()).numUpdatedRows;
  // a write kept by a pipelined batch has not run: what it matched is not known, so the batch goes the usual way
  if (n === UNANSWERED) throw new NotPipelined('a write whose answer is used');
  return n > 0n;
};

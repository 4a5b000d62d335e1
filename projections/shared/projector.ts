import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { Event } from '../../domain/shared/types.js';
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
  apply(db: Kysely<ReadDb>, event: RecordedEvent): Promise<void>;
}

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
export function defineProjector<E extends Event>(d: {
  readonly name: string;
  readonly tables: readonly (keyof ReadDb & string)[];
  readonly on: ProjectorHandlers<E>;
}): Projector {
  // The one narrowing: the engine hands over events as the wide `RecordedEvent`, and the lookup by
  // `event.type` below is what guarantees that the handler stored under key K only ever receives events of
  // type K, as its parameter type declares. TypeScript cannot relate a runtime key to a mapped type's member.
  const handlers = d.on as unknown as Readonly<Record<string, ProjectorHandler<Event>>>;
  const handles: ReadonlySet<string> = new Set(Object.keys(handlers));
  return {
    name: d.name,
    handles,
    tables: d.tables,
    async apply(db, event) {
      if (!handles.has(event.type)) return;
      await handlers[event.type]!(db, event);
    },
  };
}

/** A row's `revision` column value for an event: the stream revision the row reflects after it. */
export const rowRevision = (e: RecordedEvent): string => String(e.streamRevision);

/** Runs a guarded update; true when it matched a row, false when the row is missing or already past the event. */
export const matched = async (q: { executeTakeFirst(): Promise<{ numUpdatedRows: bigint }> }): Promise<boolean> =>
  (await q.executeTakeFirst()).numUpdatedRows > 0n;

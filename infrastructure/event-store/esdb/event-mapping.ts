/**
 * Mapping between the EventStoreDB client's shapes and the event-store port's: events going in (JSON data and
 * metadata, `schemaVersion` defaulted), events coming out (upcast to the newest shape), expected revisions, and
 * checkpoints as `$all` positions. Kept apart from the adapter so that the plain reads, the raw filtered read and
 * the subscription all turn what they read into the same `RecordedEvent` (see docs/event-store.md).
 */
import {
  ANY,
  type AppendExpectedRevision,
  type RecordedEvent as EsdbRecordedEvent,
  type EventData,
  type JSONType,
  jsonEvent,
  NO_STREAM,
  type Position,
  STREAM_EXISTS,
} from '@eventstore/db-client';
import {
  type Checkpoint,
  type EventMetadata,
  type ExpectedRevision,
  makeCheckpoint,
  type NewEvent,
  parseCheckpoint,
  type RecordedEvent,
} from '../../../application/ports/event-store.port.js';
import { upcast } from '../upcasters.js';

/** An event as read, before it becomes a port `RecordedEvent`; both client paths and the raw read produce it. */
export type RawEvent = Readonly<{
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

/** A port event as the client writes it: JSON data, and metadata that always says its `schemaVersion`. */
export function toJsonEvent(e: NewEvent): EventData {
  return jsonEvent({
    id: e.id, // the caller's id: a retried append with the same ids is idempotent on the server
    type: e.type,
    data: e.data as JSONType,
    metadata: { ...e.metadata, schemaVersion: e.metadata.schemaVersion ?? 1 },
  });
}

export function fromClient(e: EsdbRecordedEvent): RawEvent {
  if (!e.position) throw new Error(`event ${e.id} of ${e.streamId} came without a position`);
  return {
    id: e.id,
    type: e.type,
    streamName: e.streamId,
    revision: e.revision,
    data: e.data,
    metadata: e.metadata,
    created: e.created,
    commit: e.position.commit,
    prepare: e.position.prepare,
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !(v instanceof Uint8Array) && !Array.isArray(v);

export function toRecorded(e: RawEvent): RecordedEvent {
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

export function toEsdbExpected(r: ExpectedRevision): AppendExpectedRevision {
  switch (r) {
    case 'no_stream':
      return NO_STREAM;
    case 'any':
      return ANY;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      return r;
  }
}

export function positionOf(c: Checkpoint): Position {
  const [commit, prepare] = parseCheckpoint(c);
  return { commit, prepare };
}

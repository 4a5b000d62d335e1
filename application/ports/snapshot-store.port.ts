/**
 * Snapshots of aggregates whose streams grow without bound (docs/event-store.md#snapshots): the state folded up to
 * a revision, so a load reads only the events after it. A snapshot is a cache of the stream, never a source of
 * truth: a missing or outdated one only means more events to fold.
 */
export type Snapshot = Readonly<{ revision: bigint; version: number; state: unknown }>;

export interface SnapshotStorePort {
  load(stream: string): Promise<Snapshot | null>;
  /** keeps the newer of the stored snapshot and this one */
  save(stream: string, snapshot: Snapshot): Promise<void>;
}

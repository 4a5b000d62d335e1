/** An aggregate's state as this process last wrote or read it, and the revision of its stream it reflects. */
export type CachedAggregate = Readonly<{ decider: unknown; state: unknown; revision: bigint | 'no_stream' }>;

/** How many streams' last revisions an exact cache remembers, per aggregate it keeps. */
const REVISIONS_PER_ENTRY = 4;

/**
 * The aggregates the command path wrote or read last, least recently used first
 * (docs/event-store.md#the-aggregate-cache).
 *
 * - **Guarded** (a server, where other processes append): a state is only a guess. The command path takes a decision
 *   from it only when the decision appends, and the append names the revision the state reflects, so a stream
 *   another writer moved answers a conflict and the command is decided again on the stream as read.
 * - **Exact** (embedded: the event store is the log's only writer and tells of every append, `appended`): a state
 *   whose stream was appended to by anyone else is dropped at once, so what is kept is the stream's state now, and
 *   reads, refusals and no-ops are taken from it too. A state read or written while an append it did not see went
 *   to its stream is not kept: every stream's last appended revision is remembered (for many more streams than
 *   states), and a state is kept only at that revision; when that memory had to forget a stream while the state
 *   was made, the state is not kept either.
 */
export class AggregateCache {
  private readonly entries = new Map<string, CachedAggregate>();
  private readonly lastRevision = new Map<string, bigint>();
  private forgotten = 0;

  constructor(
    private readonly max: number,
    readonly exact: boolean,
  ) {}

  get(stream: string, decider: unknown): CachedAggregate | undefined {
    const c = this.entries.get(stream);
    if (!c || c.decider !== decider) return undefined;
    this.entries.delete(stream);
    this.entries.set(stream, c);
    return c;
  }

  /** A mark to hand to `keep` for a state about to be read or written. */
  mark(): number {
    return this.forgotten;
  }

  /** Keeps a state read or written since `mark`, unless (exact) an append it does not reflect went to its stream meanwhile. */
  keep(stream: string, c: CachedAggregate, mark: number): void {
    if (this.max === 0) return;
    if (this.exact) {
      const last = this.lastRevision.get(stream);
      const at = c.revision === 'no_stream' ? -1n : c.revision;
      if (last !== undefined ? last !== at : this.forgotten !== mark) return;
    }
    this.entries.delete(stream);
    this.entries.set(stream, c);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(stream: string): void {
    this.entries.delete(stream);
  }

  /** The event store appended to `stream`, which is at `revision` now (exact caches only). */
  appended(stream: string, revision: bigint): void {
    this.lastRevision.delete(stream);
    this.lastRevision.set(stream, revision);
    if (this.lastRevision.size > this.max * REVISIONS_PER_ENTRY) {
      this.lastRevision.delete(this.lastRevision.keys().next().value!);
      this.forgotten++;
    }
    const c = this.entries.get(stream);
    if (c && c.revision !== revision) this.entries.delete(stream);
  }
}

/**
 * Rows a projector wrote, kept by the process that wrote them for its own next batches (docs/event-store.md#kept-rows),
 * so that a batch about rows an earlier batch of this process wrote does not read them back. Only while this process
 * holds the projector's lease: then no other process writes its rows (the assumption its pipelined reads already make,
 * docs/event-store.md#pipelined-batches). Taking the lease, losing it, passing the moment until which no other process
 * could take it, and a batch that fails each forget every row. A batch stages what it wrote; only once it has committed
 * are those rows kept. At most `maxEntries` are kept (the oldest go first).
 */
export class KeptRows<R> {
  private readonly rows = new Map<string, R>();
  private staged = new Map<string, R | null>();
  /** until when (`performance.now()`) no other process can take the projector's lease; -Infinity: not held */
  private until = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly o: {
      maxEntries: number;
      now?: () => number;
    },
  ) {}

  private now(): number {
    return this.o.now?.() ?? performance.now();
  }

  private forget(): void {
    this.rows.clear();
    this.staged.clear();
  }

  /**
   * This process holds the projector's lease and no other can take it before `until`; null, it does not. Taking it
   * forgets what was kept before: another process may have written the rows meanwhile.
   */
  held(until: number | null): void {
    if (until === null || this.until === Number.NEGATIVE_INFINITY) this.forget();
    this.until = until ?? Number.NEGATIVE_INFINITY;
  }

  private live(): boolean {
    // past its end without a renewal, the lease may be another process's: as if let go
    if (this.until !== Number.NEGATIVE_INFINITY && this.now() >= this.until) this.held(null);
    return this.until !== Number.NEGATIVE_INFINITY;
  }

  /** The row as this process last wrote it, if it keeps it. */
  get(key: string): R | undefined {
    return this.live() ? this.rows.get(key) : undefined;
  }

  /** What the batch being applied leaves of a row: to keep once it commits, or null to forget it then. */
  stage(key: string, row: R | null): void {
    this.staged.set(key, row);
  }

  /** A batch begins: nothing staged before it is kept. */
  begin(): void {
    this.staged.clear();
  }

  /** The batch committed: what it staged is what its rows now hold. */
  committed(): void {
    if (!this.live()) {
      this.forget();
      return;
    }
    for (const [key, row] of this.staged) {
      this.rows.delete(key);
      if (row !== null) this.rows.set(key, row);
    }
    this.staged.clear();
    for (const key of this.rows.keys()) {
      if (this.rows.size <= this.o.maxEntries) break;
      this.rows.delete(key);
    }
  }

  /** The batch failed: it may have failed because another process moved the read model, so forget everything. */
  failed(): void {
    this.forget();
  }
}

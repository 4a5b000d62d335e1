/**
 * Answers read from one projector's read model, kept until that projector commits its next batch
 * (docs/event-store.md#kept-reads). Only where this process hears every batch the projector commits (embedded,
 * where every projector runs in the process): each batch forgets every answer, so a read answers what the read model
 * says as soon as it says it, as without this. An answer read while a batch came is not kept (it may have been read
 * before the batch). No answer is kept longer than `maxAgeMs`, and at most `maxEntries` are (the oldest go first).
 */
export class KeptReads {
  private readonly kept = new Map<string, { value: unknown; at: number }>();
  /** how many batches have been heard: an answer is kept only if none came while it was read */
  private generation = 0;

  constructor(private readonly o: { maxEntries: number; maxAgeMs: number; now: () => number }) {}

  /** Told after every batch the projector commits. */
  moved(): void {
    this.generation++;
    this.kept.clear();
  }

  /**
   * The kept answer for `key`, or what `look` answers (then kept). An answer of null (nothing found) is kept only with
   * `keepMissing`: where anyone can ask for any key (an API key before it is known to be good), only what exists is.
   */
  async read<T>(key: string, look: () => Promise<T | null>, o: { keepMissing: boolean }): Promise<T | null> {
    const now = this.o.now();
    const k = this.kept.get(key);
    if (k && now - k.at < this.o.maxAgeMs) return k.value as T | null;
    const generation = this.generation;
    const value = await look();
    if ((value !== null || o.keepMissing) && generation === this.generation) {
      this.kept.delete(key);
      if (this.kept.size >= this.o.maxEntries) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(key, { value, at: now });
    }
    return value;
  }
}

/** What a query asks: a kept answer, or a fresh read. */
export type ReadKeeper = Pick<KeptReads, 'read'>;

/** Where not every batch is heard (a server): every look-up reads. */
export const NOT_KEPT: ReadKeeper = { read: (_key, look) => look() };

/** The kept reads of a projector's read model (`NOT_KEPT` where this process does not hear every batch it commits). */
export type KeptReadsOf = (projector: string) => ReadKeeper;

/**
 * One `KeptReads` per projector, each told of that projector's batches by `listen` (the in-process word of every
 * batch committed, which the engine gives: docs/event-store.md#wake-ups).
 */
export function keptReadsOf(
  listen: (fn: (projector: string) => void) => void,
  o: { maxEntries: number; maxAgeMs: number; now: () => number },
): KeptReadsOf {
  const all = new Map<string, KeptReads>();
  listen((projector) => all.get(projector)?.moved());
  return (projector) => {
    const k = all.get(projector) ?? new KeptReads(o);
    all.set(projector, k);
    return k;
  };
}

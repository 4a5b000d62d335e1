import type { CommitPhase, LeaseListener } from './checkpoint-runner.js';

/**
 * Answers read from one projector's read model, kept until that projector commits its next batch
 * (docs/event-store.md#kept-reads). Only where this process hears every batch the projector commits: embedded, where
 * every projector runs in the process; on a server, with `lease`, only while this process holds the projector's lease
 * (no other process commits its batches then). Each batch forgets every answer, so a read answers what the read model
 * says as soon as it says it, as without this. An answer read while a batch came is not kept (it may have been read
 * before the batch). No answer is kept longer than `maxAgeMs`, and at most `maxEntries` are (the oldest go first).
 */
export class KeptReads {
  private readonly kept = new Map<string, { value: unknown; at: number }>();
  /** how many batches have been heard: an answer is kept only if none came while it was read */
  private generation = 0;
  /** with `lease`: until when (`lease.now()`) no other process can take the projector's lease; -Infinity: not held */
  private until = Number.NEGATIVE_INFINITY;
  /** with `lease`: the batches whose commit has started and not yet ended */
  private committing = 0;

  constructor(
    private readonly o: {
      maxEntries: number;
      maxAgeMs: number;
      now: () => number;
      /** a server's: answers are kept and given only while the lease is held, and never while a batch commits */
      lease?: { now: () => number };
    },
  ) {}

  /** Told after every batch the projector commits. */
  moved(): void {
    this.generation++;
    this.kept.clear();
  }

  /**
   * With `lease`: this process holds the projector's lease and no other can take it before `until`; null, it does not
   * (then nothing is kept). Taking it forgets what was kept before: another process may have moved the read model.
   */
  held(until: number | null): void {
    if (until === null || this.until === Number.NEGATIVE_INFINITY) this.moved();
    this.until = until ?? Number.NEGATIVE_INFINITY;
  }

  /**
   * With `lease`: a batch's commit starts, or ends (committed or not). While one commits, nothing kept is given and
   * nothing read is kept: a request that saw the batch's checkpoint before this process heard the batch end (another
   * connection's read of the stored checkpoints) reads the read model.
   */
  commit(phase: CommitPhase): void {
    this.committing = Math.max(0, this.committing + (phase === 'start' ? 1 : -1));
    this.moved();
  }

  private live(): boolean {
    if (!this.o.lease) return true;
    // past its end without a renewal, the lease may be another process's: as if let go
    if (this.until !== Number.NEGATIVE_INFINITY && this.o.lease.now() >= this.until) this.held(null);
    return this.committing === 0 && this.until !== Number.NEGATIVE_INFINITY;
  }

  /**
   * The kept answer for `key`, or what `look` answers (then kept). An answer of null (nothing found) is kept only with
   * `keepMissing`: where anyone can ask for any key (an API key before it is known to be good), only what exists is.
   */
  async read<T>(key: string, look: () => Promise<T | null>, o: { keepMissing: boolean }): Promise<T | null> {
    const now = this.o.now();
    const k = this.live() ? this.kept.get(key) : undefined;
    if (k && now - k.at < this.o.maxAgeMs) return k.value as T | null;
    const generation = this.generation;
    const value = await look();
    if ((value !== null || o.keepMissing) && generation === this.generation && this.live()) {
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

/** A server's word of the projectors' leases this process holds, and of their batches' commits (the engine's `onLease`). */
export type LeaseWord = Readonly<{ now: () => number; listen: (fn: LeaseListener) => void }>;

/**
 * One `KeptReads` per projector, each told of that projector's batches by `listen` (the word of every batch committed,
 * which the engine gives: docs/event-store.md#wake-ups). On a server, `lease` tells which projectors' leases this
 * process holds, and each keeps answers only while it does.
 */
export function keptReadsOf(
  listen: (fn: (projector: string) => void) => void,
  o: { maxEntries: number; maxAgeMs: number; now: () => number },
  lease?: LeaseWord,
): KeptReadsOf {
  const all = new Map<string, KeptReads>();
  const of = (projector: string): KeptReads => {
    const k = all.get(projector) ?? new KeptReads(lease ? { ...o, lease: { now: lease.now } } : o);
    all.set(projector, k);
    return k;
  };
  listen((projector) => all.get(projector)?.moved());
  lease?.listen({ held: (p, until) => of(p).held(until), committing: (p, phase) => of(p).commit(phase) });
  return of;
}

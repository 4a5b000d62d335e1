/** 2^24 bits (2 MiB): about 1% false "may exist" at 1.7 million streams, more beyond (never a wrong "does not"). */
const BITS = 1 << 24;
const HASHES = 7;
/** stream names read per statement while the set is filled from the `streams` table */
const PAGE = 5_000;

/** FNV-1a over the name's UTF-16 code units, from a seed: two seeds give the two hashes of double hashing. */
function fnv(name: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The streams that exist, as a Bloom filter (docs/event-store.md#streams-known-to-be-new): where this process is the
 * log's only writer (embedded), every stream is created by its own appends, so once the filter holds every name in
 * the `streams` table and every append since, a name it does not hold names no stream, and reading that stream
 * would find nothing. It answers "may exist" for a few names that do not (then the stream is read, as it always
 * was), and never "does not" for one that does.
 */
export class KnownStreams {
  private readonly bits = new Uint8Array(BITS / 8);
  private filled = false;
  private filling: Promise<void> | null = null;

  add(name: string): void {
    const a = fnv(name, 0x811c9dc5);
    const b = fnv(name, 0x9747b28c) | 1;
    for (let i = 0; i < HASHES; i++) {
      const bit = ((a + Math.imul(i, b)) >>> 0) & (BITS - 1);
      this.bits[bit >>> 3]! |= 1 << (bit & 7);
    }
  }

  /** False only when no stream of this name exists; true, until the filter is filled, for every name. */
  mayExist(name: string): boolean {
    if (!this.filled) return true;
    const a = fnv(name, 0x811c9dc5);
    const b = fnv(name, 0x9747b28c) | 1;
    for (let i = 0; i < HASHES; i++) {
      const bit = ((a + Math.imul(i, b)) >>> 0) & (BITS - 1);
      if ((this.bits[bit >>> 3]! & (1 << (bit & 7))) === 0) return false;
    }
    return true;
  }

  /**
   * Fills the filter from the names stored, a page at a time, once (appends meanwhile add theirs as they happen).
   * A failure leaves it unfilled: every name "may exist", and the next call tries again.
   */
  fill(page: (after: string | null, limit: number) => Promise<string[]>): Promise<void> {
    this.filling ??= (async () => {
      let after: string | null = null;
      for (;;) {
        const names = await page(after, PAGE);
        for (const n of names) this.add(n);
        if (names.length < PAGE) break;
        after = names.at(-1)!;
      }
      this.filled = true;
    })().catch(() => {
      this.filling = null;
    });
    return this.filling;
  }
}

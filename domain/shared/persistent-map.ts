/**
 * A map from strings that never changes: `set` and `delete` answer a new map that shares all but one path with the
 * old one, which stays as it was (docs/event-store.md#states-that-grow). It is a hash trie, 32 ways a level (a key's
 * hash, 5 bits a level, picks its path), so a change copies a few small arrays however large the map: a state that
 * keeps one entry per event folds n events in O(n log n), where copying a `Map` at every event costs O(n²).
 */

const BITS = 5;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;
/** levels a 30-bit hash can tell apart; keys whose 30 bits are the same share a bucket below them */
const LEVELS = 6;

type Leaf<V> = Readonly<{ kind: 'leaf'; hash: number; key: string; value: V }>;
type Bucket<V> = Readonly<{ kind: 'bucket'; hash: number; leaves: readonly Leaf<V>[] }>;
type Branch<V> = Readonly<{ kind: 'branch'; slots: readonly (Slot<V> | undefined)[] }>;
type Slot<V> = Leaf<V> | Bucket<V> | Branch<V>;

/** FNV-1a over the key's UTF-16 code units, 30 bits of it */
export const fnv30 = (key: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h & 0x3fffffff;
};

const slotAt = (hash: number, level: number) => (hash >>> (level * BITS)) & MASK;

/** A branch at `level` holding one slot already placed (a leaf or a bucket, which knows its hash). */
function branchOf<V>(s: Leaf<V> | Bucket<V>, level: number): Branch<V> {
  const slots = new Array<Slot<V> | undefined>(WIDTH);
  slots[slotAt(s.hash, level)] = s;
  return { kind: 'branch', slots };
}

function put<V>(s: Slot<V> | undefined, level: number, leaf: Leaf<V>): { slot: Slot<V>; added: boolean } {
  if (s === undefined) return { slot: leaf, added: true };
  switch (s.kind) {
    case 'leaf':
      if (s.key === leaf.key) return { slot: leaf, added: false };
      if (s.hash === leaf.hash) return { slot: { kind: 'bucket', hash: s.hash, leaves: [s, leaf] }, added: true };
      return put(branchOf(s, level), level, leaf);
    case 'bucket': {
      if (s.hash !== leaf.hash) return put(branchOf(s, level), level, leaf);
      const i = s.leaves.findIndex((l) => l.key === leaf.key);
      const leaves = i < 0 ? [...s.leaves, leaf] : s.leaves.map((l, j) => (j === i ? leaf : l));
      return { slot: { ...s, leaves }, added: i < 0 };
    }
    case 'branch': {
      if (level >= LEVELS) throw new Error('persistent map: a branch below the hash bits');
      const i = slotAt(leaf.hash, level);
      const r = put(s.slots[i], level + 1, leaf);
      const slots = s.slots.slice();
      slots[i] = r.slot;
      return { slot: { kind: 'branch', slots }, added: r.added };
    }
  }
}

function remove<V>(s: Slot<V> | undefined, level: number, hash: number, key: string): { slot: Slot<V> | undefined; removed: boolean } {
  if (s === undefined) return { slot: s, removed: false };
  switch (s.kind) {
    case 'leaf':
      return s.key === key ? { slot: undefined, removed: true } : { slot: s, removed: false };
    case 'bucket': {
      const leaves = s.leaves.filter((l) => l.key !== key);
      if (leaves.length === s.leaves.length) return { slot: s, removed: false };
      return { slot: leaves.length === 1 ? leaves[0] : { ...s, leaves }, removed: true };
    }
    case 'branch': {
      const i = slotAt(hash, level);
      const r = remove(s.slots[i], level + 1, hash, key);
      if (!r.removed) return { slot: s, removed: false };
      const slots = s.slots.slice();
      slots[i] = r.slot;
      // a branch left with one leaf (or bucket) gives way to it; a lone branch below stays, it places its own slots
      const left = slots.filter((x) => x !== undefined);
      if (left.length === 0) return { slot: undefined, removed: true };
      if (left.length === 1 && left[0]!.kind !== 'branch') return { slot: left[0], removed: true };
      return { slot: { kind: 'branch', slots }, removed: true };
    }
  }
}

export class PersistentMap<V> {
  private constructor(
    private readonly root: Slot<V> | undefined,
    readonly size: number,
    private readonly hash: (key: string) => number,
  ) {}

  /** An empty map; `hash` (30 bits) is for tests that need keys to collide. */
  static empty<V>(hash: (key: string) => number = fnv30): PersistentMap<V> {
    return new PersistentMap<V>(undefined, 0, hash);
  }

  get(key: string): V | undefined {
    return this.leafOf(key)?.value;
  }

  has(key: string): boolean {
    return this.leafOf(key) !== undefined;
  }

  set(key: string, value: V): PersistentMap<V> {
    const r = put(this.root, 0, { kind: 'leaf', hash: this.hashOf(key), key, value });
    return new PersistentMap(r.slot, this.size + (r.added ? 1 : 0), this.hash);
  }

  delete(key: string): PersistentMap<V> {
    const r = remove(this.root, 0, this.hashOf(key), key);
    return r.removed ? new PersistentMap(r.slot, this.size - 1, this.hash) : this;
  }

  private hashOf(key: string): number {
    return this.hash(key) & 0x3fffffff;
  }

  /** The key's leaf: down its hash's path to a leaf, or a bucket of its whole hash. */
  private leafOf(key: string): Leaf<V> | undefined {
    const h = this.hashOf(key);
    let s = this.root;
    for (let level = 0; s !== undefined; level++) {
      if (s.kind === 'leaf') return s.key === key ? s : undefined;
      if (s.kind === 'bucket') return s.hash === h ? s.leaves.find((l) => l.key === key) : undefined;
      s = s.slots[slotAt(h, level)];
    }
    return undefined;
  }

  /** Every entry, in no particular order. */
  *entries(): IterableIterator<[string, V]> {
    const stack: (Slot<V> | undefined)[] = [this.root];
    while (stack.length > 0) {
      const s = stack.pop();
      if (s === undefined) continue;
      if (s.kind === 'leaf') yield [s.key, s.value];
      else if (s.kind === 'bucket') for (const l of s.leaves) yield [l.key, l.value];
      else stack.push(...s.slots);
    }
  }
}

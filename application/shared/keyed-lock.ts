/**
 * Runs work for one key at a time within this process (e.g. the writes to one conversation), so concurrent
 * requests queue instead of racing on the stream's revision. Across processes the optimistic concurrency of
 * the event store still decides; this only spares conflicts and retries.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const result = prev.then(work, work);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

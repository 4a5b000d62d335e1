/**
 * What is asked for during one turn of Node's event loop, done once at its end for all of it
 * (docs/event-store.md#reading-streams): each `ask` adds its keys to the turn's batch and answers the batch's one
 * result. The batch runs a moment later than it was asked for, so a read it makes is never staler than one made at
 * once. Stream reads and read-your-writes' checkpoint reads gather so.
 */
export function perTurn<K, R>(run: (keys: readonly K[]) => Promise<R>): (keys: readonly K[]) => Promise<R> {
  let open: { keys: Set<K>; result: Promise<R> } | null = null;
  return (keys) => {
    if (!open) {
      const batch: { keys: Set<K>; result: Promise<R> } = { keys: new Set(), result: Promise.resolve(undefined as R) };
      batch.result = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        open = null;
        return run([...batch.keys]);
      });
      open = batch;
    }
    for (const k of keys) open.keys.add(k);
    return open.result;
  };
}

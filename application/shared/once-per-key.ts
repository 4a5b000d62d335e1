/** `make` called once per key, its result shared by every later call with that key (a lookup shared by a batch). */
export function oncePerKey<A extends unknown[], V>(key: (...a: A) => string, make: (...a: A) => V): (...a: A) => V {
  const made = new Map<string, V>();
  return (...a) => {
    const k = key(...a);
    if (!made.has(k)) made.set(k, make(...a));
    return made.get(k) as V;
  };
}

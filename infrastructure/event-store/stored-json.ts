// What a `jsonb` column gives back, made without the round trip through the database.

/**
 * JSON text as it comes back from a `jsonb` column: parsed, with each object's keys in `jsonb`'s order (shorter
 * first, then by their UTF-8 bytes). The log tail is handed an append's events in this form
 * (docs/event-store.md#the-log-tail), so that they are the same, key order included, as a read from the table.
 */
export const fromStoredText = (text: string): unknown => inJsonbOrder(JSON.parse(text));

/** Puts the keys of each object of a freshly parsed value in `jsonb`'s order; an object already in order is kept. */
function inJsonbOrder(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = inJsonbOrder(v[i]);
    return v;
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  let ordered = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = o[k];
    if (x !== null && typeof x === 'object') {
      const y = inJsonbOrder(x);
      if (y !== x) put(o, k, y);
    }
    if (ordered && i > 0 && compareJsonbKeys(keys[i - 1]!, k) > 0) ordered = false;
  }
  if (ordered) return o;
  keys.sort(compareJsonbKeys);
  const out: Record<string, unknown> = {};
  for (const k of keys) put(out, k, o[k]);
  return out;
}

/** Sets a property; a parsed key `__proto__` is a property like any other, and must stay one (not the prototype). */
function put(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  else o[k] = v;
}

/** The UTF-8 length of a string: its length when it is ASCII. */
function utf8Length(s: string): number {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return Buffer.byteLength(s);
  return s.length;
}

/** `jsonb`'s order of keys: shorter first (in UTF-8 bytes), then by bytes. */
function compareJsonbKeys(a: string, b: string): number {
  const [la, lb] = [utf8Length(a), utf8Length(b)];
  if (la !== lb) return la - lb;
  if (la === a.length && lb === b.length) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

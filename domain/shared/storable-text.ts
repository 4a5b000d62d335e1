/**
 * Text from outside made storable (docs/input-rules.md#what-upstream-servers-answer). A client's request with
 * text the database cannot hold is refused at the edge; an upstream server's answer cannot be refused (it already
 * happened), so what it says is kept in a form PostgreSQL's `text` and `jsonb` accept: every NUL character and
 * every lone UTF-16 surrogate becomes U+FFFD (the replacement character, as a decoder does with invalid UTF-8),
 * and the text is cut to a bound at a code-point boundary, so a cut never leaves half a surrogate pair behind.
 */
export const REPLACEMENT = '\ufffd';

// With the `u` flag a well-formed surrogate pair is one code point, so `\p{Cs}` only matches a lone half.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding NUL is the point: PostgreSQL text cannot store it
const UNSTORABLE = /[\u0000\p{Cs}]/gu;

/** Whether `s` can be stored as it is. */
export const isStorable = (s: string): boolean => !new RegExp(UNSTORABLE.source, 'u').test(s);

/**
 * `s` with NUL and lone surrogates replaced, at most `maxChars` UTF-16 units long (a cut ends with `…`, within the
 * bound). Pure and total: any string in, a storable string out.
 */
export function storableText(s: string, maxChars = Number.POSITIVE_INFINITY): string {
  let out = s.replace(UNSTORABLE, REPLACEMENT);
  if (out.length > maxChars) {
    let end = Math.max(0, maxChars - 1);
    // do not split a surrogate pair: a high half at the cut goes with its low half
    const code = out.charCodeAt(end - 1);
    if (end > 0 && code >= 0xd800 && code <= 0xdbff) end--;
    out = `${out.slice(0, end)}…`;
  }
  return out;
}

/** `storableText` that keeps null as null. */
export const storableOrNull = (s: string | null | undefined, maxChars?: number): string | null =>
  s === null || s === undefined ? null : storableText(s, maxChars);

/**
 * A JSON value from outside made storable: strings and keys through `storableText`, and anything nested deeper
 * than `maxDepth` replaced by null (`jsonb` and the parsers of readers have a depth limit; docs/input-rules.md).
 */
export function storableJson(v: unknown, maxDepth = 32, depth = 0): unknown {
  if (typeof v === 'string') return storableText(v);
  if (v === null || typeof v !== 'object') return typeof v === 'number' && !Number.isFinite(v) ? null : v;
  if (depth >= maxDepth) return null;
  if (Array.isArray(v)) return v.map((x) => storableJson(x, maxDepth, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[storableText(k)] = storableJson(x, maxDepth, depth + 1);
  return out;
}

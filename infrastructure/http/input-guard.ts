import type { Request } from 'express';
import { RequestValidationError } from './errors.js';

/**
 * Input that PostgreSQL cannot store, refused at the edge for every route before any handler runs
 * (docs/input-rules.md): `text` and `jsonb` cannot hold the NUL character, `jsonb` refuses a lone UTF-16
 * surrogate, and a free-form JSON value nested without bound would exhaust the parser's stack.
 */
export const MAX_JSON_DEPTH = 32;
/** At most this many offending places are listed in one answer. */
const MAX_ITEMS = 20;

type Loc = (string | number)[];
type Item = { loc: Loc; msg: string; type: string };

// With the `u` flag a well-formed surrogate pair is one code point, so `\p{Cs}` only matches a lone half.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding NUL is the point: PostgreSQL text cannot store it
const NUL = /\u0000/;
const LONE_SURROGATE = /\p{Cs}/u;

const checkString = (s: string, loc: Loc): Item | null =>
  NUL.test(s)
    ? { loc, msg: 'Text must not contain the NUL character (\\u0000)', type: 'string_nul_character' }
    : LONE_SURROGATE.test(s)
      ? { loc, msg: 'Text must be valid Unicode: it contains a lone UTF-16 surrogate', type: 'string_unicode' }
      : null;

/** Every place in `value` (strings and object keys) that cannot be stored; iterative, so any depth is safe to walk. */
export function findUnstorable(value: unknown, root: Loc, maxDepth = MAX_JSON_DEPTH): Item[] {
  const items: Item[] = [];
  const stack: { v: unknown; loc: Loc; depth: number }[] = [{ v: value, loc: root, depth: 0 }];
  while (stack.length > 0 && items.length < MAX_ITEMS) {
    const { v, loc, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const bad = checkString(v, loc);
      if (bad) items.push(bad);
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= maxDepth) {
      items.push({ loc, msg: `Value is nested more than ${maxDepth} levels deep`, type: 'too_deep' });
      continue;
    }
    // pushed in reverse so the first offending place in document order is reported first
    const entries: [string | number, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, child] = entries[i]!;
      if (typeof k === 'string') {
        const badKey = checkString(k, [...loc, k]);
        if (badKey) {
          items.push({ ...badKey, msg: `Key: ${badKey.msg}` });
          continue;
        }
      }
      stack.push({ v: child, loc: [...loc, k], depth: depth + 1 });
    }
  }
  return items.slice(0, MAX_ITEMS);
}

/** Throws a 422 naming every path parameter, query value and body string that cannot be stored. */
export function assertStorableInput(req: Request): void {
  const items = [
    ...findUnstorable(req.params, ['path']),
    ...findUnstorable(req.query, ['query']),
    ...(req.body === undefined ? [] : findUnstorable(req.body, ['body'])),
  ];
  if (items.length > 0) throw new RequestValidationError(items.slice(0, MAX_ITEMS));
}

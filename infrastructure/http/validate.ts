import type { Request } from 'express';
import type { z } from 'zod';
import { unknownKeys } from './compat.js';
import { fromZod, RequestValidationError, type ValidationItem } from './errors.js';

type Source = 'body' | 'query' | 'path';

const A_OR_AN: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
  bigint: 'an integer',
  date: 'a date',
  record: 'an object',
  tuple: 'a list',
};
const unit = (origin: string, n: number | bigint) =>
  origin === 'string' ? ` character${n === 1 ? '' : 's'}` : origin === 'array' || origin === 'set' ? ` item${n === 1 ? '' : 's'}` : '';

/**
 * Our wording for zod's own failures: a short phrase that reads after the field name ("body.limit: must be at
 * most 100"). Messages written on a schema (`.regex(re, 'must be a three-digit area code')`) win over these.
 */
const phrase = (iss: z.core.$ZodRawIssue): string | undefined => {
  switch (iss.code) {
    case 'invalid_type':
      return iss.input === undefined ? 'is required' : `must be ${A_OR_AN[iss.expected] ?? iss.expected}`;
    case 'invalid_value':
      return `must be one of ${iss.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small': {
      const n = iss.minimum;
      if (iss.origin === 'string' && n === 1 && !iss.exact) return 'must not be empty';
      return iss.exact
        ? `must be exactly ${n}${unit(iss.origin, n)}`
        : iss.inclusive === false
          ? `must be more than ${n}${unit(iss.origin, n)}`
          : `must be at least ${n}${unit(iss.origin, n)}`;
    }
    case 'too_big': {
      const n = iss.maximum;
      return iss.exact
        ? `must be exactly ${n}${unit(iss.origin, n)}`
        : iss.inclusive === false
          ? `must be less than ${n}${unit(iss.origin, n)}`
          : `must be at most ${n}${unit(iss.origin, n)}`;
    }
    case 'invalid_format':
      return iss.format === 'regex' ? `must match ${iss.pattern ?? 'the expected pattern'}` : `must be a valid ${iss.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${iss.divisor}`;
    case 'unrecognized_keys':
      return 'is not a field of this request';
    case 'invalid_union':
      return 'does not match any accepted form';
    default:
      return undefined;
  }
};

/**
 * Parse one part of a request with its zod schema; failures become 422 with `loc` naming the part.
 * `accepted` makes the part strict: a field outside it is a 422 (`extra_forbidden`) instead of being ignored.
 */
export function parse<S extends z.ZodType>(
  schema: S | undefined,
  req: Request,
  source: Source,
  accepted?: ReadonlySet<string>,
): z.infer<S> {
  const input = source === 'body' ? req.body : source === 'query' ? req.query : req.params;
  const extra: ValidationItem[] = accepted
    ? unknownKeys(input, accepted).map((k) => ({
        loc: [source, k],
        msg: 'is not a field of this request, and paid requests reject what they do not know',
        type: 'extra_forbidden',
        input: (input as Record<string, unknown>)[k],
      }))
    : [];
  if (!schema) {
    if (extra.length) throw new RequestValidationError(extra);
    return undefined as z.infer<S>;
  }
  const r = schema.safeParse(input, { reportInput: true, error: phrase });
  if (r.success && !extra.length) return r.data;
  throw new RequestValidationError([...extra, ...(r.success ? [] : fromZod(source, r.error).items)]);
}

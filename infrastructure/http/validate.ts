import type { Request } from 'express';
import type { z } from 'zod';
import { fromZod } from './errors.js';

/** Parse one part of a request with its zod schema; failures become 422 with `loc` naming the part. */
export function parse<S extends z.ZodType>(schema: S, req: Request, source: 'body' | 'query' | 'path'): z.infer<S> {
  const input = source === 'body' ? req.body : source === 'query' ? req.query : req.params;
  const r = schema.safeParse(input);
  if (!r.success) throw fromZod(source, r.error);
  return r.data;
}

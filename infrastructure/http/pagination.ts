import { z } from './openapi.js';

/** Query integers arrive as strings; anything that is not a whole number is a 422, never a 500. */
const queryInt = (o: { min: number; max?: number; def: number }) => {
  let n = z.number().int().min(o.min);
  if (o.max !== undefined) n = n.max(o.max);
  return z.preprocess(
    (v) => (v === undefined || v === '' ? undefined : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v),
    n.default(o.def),
  );
};

/** Offset lists (docs/api.md#pagination): `limit` default 20 max 100, `offset` min 0. */
export const offsetQuery = (o: { defaultLimit?: number; maxLimit?: number } = {}) =>
  z.object({
    limit: queryInt({ min: 1, max: o.maxLimit ?? 100, def: o.defaultLimit ?? 20 }).openapi({ description: 'page size' }),
    offset: queryInt({ min: 0, def: 0 }).openapi({ description: 'items to skip' }),
  });

export const offsetEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), hasMore: z.boolean(), total: z.number().int() });

export const toOffsetPage = <T>(page: { data: T[]; total: number }, q: { offset: number }) => ({
  data: page.data,
  hasMore: q.offset + page.data.length < page.total,
  total: page.total,
});

/** Cursor lists (messages): time-ordered, `before`/`after` date-times, `limit` default 50 max 200. */
export const cursorQuery = () =>
  z.object({
    limit: queryInt({ min: 1, max: 200, def: 50 }),
    before: z.iso.datetime({ offset: true }).optional(),
    after: z.iso.datetime({ offset: true }).optional(),
  });

export const cursorEnvelope = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), hasMore: z.boolean() });

export { queryInt };

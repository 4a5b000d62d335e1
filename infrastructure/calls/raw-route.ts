import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { RequestContext } from '../../application/shared/context.js';
import type { Api } from '../http/api.js';
import { assertStorableInput } from '../http/input-guard.js';
import { ErrorEnvelope, PlainError, ValidationErrorBody } from '../http/openapi.js';
import { parse } from '../http/validate.js';

type AnyObject = z.ZodType<Record<string, unknown>>;

export type RawRouteDef<Q extends AnyObject, P extends AnyObject> = Readonly<{
  path: string;
  summary: string;
  description?: string;
  tag: string;
  /** default true; false for a route that guards itself (a signed URL) */
  auth?: boolean;
  query?: Q;
  params?: P;
  /** the success answer's media type and what it holds, for the OpenAPI document */
  content: Readonly<{ mediaType: string; schema: z.ZodType; description: string }>;
  /** request headers the route reads, documented as parameters */
  headers?: AnyObject;
  errors?: readonly number[];
  /** writes the answer itself (status, headers, body); thrown errors before the first byte answer in the error shapes */
  handler: (input: { query: z.infer<Q>; params: z.infer<P>; ctx: RequestContext; req: Request; res: Response }) => Promise<void>;
}>;

/**
 * A GET whose success answer is not JSON (the transcript's event stream, a recording's audio), declared once like
 * every other route: the same input checks and zod validation as `Api.route` (infrastructure/http/api.ts), and an
 * OpenAPI entry with the real media type. Errors answer in the project's error shapes like any route's.
 */
export function rawGet<Q extends AnyObject = AnyObject, P extends AnyObject = AnyObject>(api: Api, def: RawRouteDef<Q, P>): void {
  const auth = def.auth ?? true;
  const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
  const errors: Record<number, ReturnType<typeof json>> = { 422: json(ValidationErrorBody, 'Validation error') };
  if (auth) {
    errors[401] = json(PlainError, 'Missing or invalid API key');
    errors[429] = json(PlainError, 'Too many requests');
  }
  for (const s of def.errors ?? []) errors[s] = json(s === 401 || s === 403 || s === 429 ? PlainError : ErrorEnvelope, `Error ${s}`);
  api.registry.registerPath({
    method: 'get',
    path: def.path.replace(/:([A-Za-z_]+)/g, '{$1}'),
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    tags: [def.tag],
    ...(auth ? {} : { security: [] }),
    request: {
      ...(def.query ? { query: def.query as never } : {}),
      ...(def.params ? { params: def.params as never } : {}),
      ...(def.headers ? { headers: def.headers as never } : {}),
    },
    responses: {
      200: { description: def.content.description, content: { [def.content.mediaType]: { schema: def.content.schema } } },
      ...errors,
    },
  });
  api.router.get(def.path, async (req, res) => {
    assertStorableInput(req);
    const query = def.query ? parse(def.query, req, 'query') : {};
    const params = def.params ? parse(def.params, req, 'path') : {};
    const requestId = String(res.locals.requestId);
    const ctx = (res.locals.ctx as RequestContext | undefined) ?? {
      accountId: 'anonymous',
      requestId,
      correlationId: requestId,
      actor: 'anonymous',
    };
    await def.handler({ query, params, ctx, req, res } as never);
  });
}

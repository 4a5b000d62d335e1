import type { Request, RequestHandler, Response, Router } from 'express';
import type { z } from 'zod';
import type { RequestContext } from '../../application/shared/context.js';
import { acceptedKeys } from './compat.js';
import { assertStorableInput } from './input-guard.js';
import { ErrorEnvelope, type OpenAPIRegistry, PlainError, ValidationErrorBody } from './openapi.js';
import { parse } from './validate.js';

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';
type AnyObject = z.ZodType<Record<string, unknown>>;

export type RouteDef<B extends z.ZodType, Q extends AnyObject, P extends AnyObject> = {
  method: Method;
  /** express style: `/v1/agents/:agent_id` */
  path: string;
  summary: string;
  tag: string;
  /** default true; false for sign-up, health and docs */
  auth?: boolean;
  /**
   * A paid operation: a body or query field it does not know is a 422 naming it, never ignored, so that a
   * typo or an unsupported option cannot buy the wrong thing (docs/compatibility.md). Free operations ignore them.
   */
  paid?: boolean;
  body?: B;
  query?: Q;
  params?: P;
  status?: number;
  response: z.ZodType;
  /** extra documented error statuses */
  errors?: readonly number[];
  handler: (input: {
    body: z.infer<B>;
    query: z.infer<Q>;
    params: z.infer<P>;
    ctx: RequestContext;
    req: Request;
    res: Response;
  }) => Promise<unknown>;
};

/**
 * Declares a route once: the express handler and its OpenAPI entry come from the same zod schemas, so the
 * published document cannot drift from what the server validates.
 */
export class Api {
  constructor(
    readonly router: Router,
    readonly registry: OpenAPIRegistry,
  ) {}

  route<B extends z.ZodType = z.ZodUndefined, Q extends AnyObject = AnyObject, P extends AnyObject = AnyObject>(
    def: RouteDef<B, Q, P>,
  ): void {
    const status = def.status ?? 200;
    const auth = def.auth ?? true;
    const errorResponses: Record<number, { description: string; content: { 'application/json': { schema: z.ZodType } } }> = {
      422: { description: 'Validation error', content: { 'application/json': { schema: ValidationErrorBody } } },
    };
    if (auth) {
      errorResponses[401] = { description: 'Missing or invalid API key', content: { 'application/json': { schema: PlainError } } };
      errorResponses[429] = { description: 'Too many requests', content: { 'application/json': { schema: PlainError } } };
    }
    for (const s of def.errors ?? []) {
      const plain = s === 401 || s === 402 || s === 403 || s === 429;
      errorResponses[s] = { description: `Error ${s}`, content: { 'application/json': { schema: plain ? PlainError : ErrorEnvelope } } };
    }
    this.registry.registerPath({
      method: def.method,
      path: def.path.replace(/:([A-Za-z_]+)/g, '{$1}'),
      summary: def.summary,
      ...(def.paid ? { description: 'Paid operation: unknown body or query fields are rejected with 422 (`extra_forbidden`).' } : {}),
      tags: [def.tag],
      ...(auth ? {} : { security: [] }),
      request: {
        ...(def.body ? { body: { content: { 'application/json': { schema: def.body } } } } : {}),
        ...(def.query ? { query: def.query as never } : {}),
        ...(def.params ? { params: def.params as never } : {}),
      },
      responses: {
        // 204 answers no body at all (DELETE /v1/contacts/{id}: docs/contacts.md#delete)
        [status]:
          status === 204
            ? { description: 'No content' }
            : { description: 'Success', content: { 'application/json': { schema: def.response } } },
        ...errorResponses,
      },
    });
    const strict = def.paid ? { body: keysOf(def.body, def.path), query: keysOf(def.query, def.path) } : undefined;
    const handler: RequestHandler = async (req, res) => {
      assertStorableInput(req);
      const body = def.body || strict ? parse(def.body, req, 'body', strict?.body) : undefined;
      const query = def.query || strict ? (parse(def.query, req, 'query', strict?.query) ?? {}) : {};
      const params = def.params ? parse(def.params, req, 'path') : {};
      // unauthenticated routes act for nobody yet: their events still carry the request and correlation ids
      const requestId = String(res.locals.requestId);
      const ctx = (res.locals.ctx as RequestContext | undefined) ?? {
        accountId: 'anonymous',
        requestId,
        correlationId: requestId,
        actor: 'anonymous',
      };
      const result = await def.handler({ body, query, params, ctx, req, res } as never);
      if (status === 204) {
        res.status(204).end();
        return;
      }
      // the response schema fixes field order and strips anything internal that is not part of the contract
      const out = def.response.safeParse(result);
      // a result the contract cannot describe is our bug, not the client's: a 500, never a 422 after a write
      if (!out.success)
        throw new Error(`response of ${def.method.toUpperCase()} ${def.path} does not match its schema: ${out.error.message}`);
      res.status(status).json(out.data);
    };
    this.router[def.method](def.path, handler);
  }
}

/** The fields a paid route accepts in one part (none when it declares no schema); a schema without a fixed field list cannot be strict. */
function keysOf(schema: z.ZodType | undefined, path: string): ReadonlySet<string> {
  if (!schema) return new Set();
  const keys = acceptedKeys(schema);
  if (!keys) throw new Error(`paid route ${path}: its body and query schemas must be objects, so that unknown fields can be named`);
  return keys;
}

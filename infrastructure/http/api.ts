import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { z } from 'zod';
import type { RequestContext } from '../../application/shared/context.js';
import { acceptedKeys } from './compat.js';
import { assertStorableInput } from './input-guard.js';
import { ErrorEnvelope, type OpenAPIRegistry, PlainError, ValidationErrorBody } from './openapi.js';
import { parse } from './validate.js';

/** The largest form body a route declared with `form` reads, and the most fields in it. */
export const FORM_MAX_BYTES = 64 * 1024;
export const FORM_MAX_FIELDS = 200;

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';
/** A query, path or header schema: an object (or one piped through a transform), as the OpenAPI document takes it. */
export type AnyObject = (z.ZodObject | z.ZodPipe) & z.ZodType<Record<string, unknown>>;
type Json = { description: string; content: { 'application/json': { schema: z.ZodType } } };
const json = (schema: z.ZodType, description: string): Json => ({ description, content: { 'application/json': { schema } } });

/** What a route's handler gets: its validated parts, the acting context, and the request and response themselves. */
type RouteInput<B extends z.ZodType, Q extends AnyObject, P extends AnyObject> = {
  body: z.infer<B>;
  query: z.infer<Q>;
  params: z.infer<P>;
  ctx: RequestContext;
  req: Request;
  res: Response;
};

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
  /**
   * The body comes as a form (`application/x-www-form-urlencoded`: a carrier's callbacks, docs/carriers.md#callbacks)
   * rather than JSON: parsed flat (a repeated key as a list), documented as such.
   */
  form?: boolean;
  query?: Q;
  params?: P;
  status?: number;
  response: z.ZodType;
  /**
   * The success answer is a document in this media type rather than JSON (a carrier's callback answers TwiML,
   * docs/carriers.md#callbacks): the handler returns its text, checked by `response`.
   */
  produces?: string;
  /** extra documented error statuses */
  errors?: readonly number[];
  handler: (input: RouteInput<B, Q, P>) => Promise<unknown>;
};

/**
 * A GET whose success answer is not JSON (the transcript's event stream, a recording's audio): the same input checks
 * and validation as every route, an OpenAPI entry with the real media type, errors in the project's error shapes.
 */
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
  handler: (input: Omit<RouteInput<z.ZodUndefined, Q, P>, 'body'>) => Promise<void>;
}>;

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
    this.document(def, {
      // 204 answers no body at all (DELETE /v1/contacts/{id}: docs/contacts.md#delete)
      [status]:
        status === 204
          ? { description: 'No content' }
          : def.produces
            ? { description: 'Success', content: { [def.produces]: { schema: def.response } } }
            : json(def.response, 'Success'),
    });
    const strict = def.paid ? { body: keysOf(def.body, def.path), query: keysOf(def.query, def.path) } : undefined;
    const handler: RequestHandler = async (req, res) => {
      const result = await def.handler(inputOf(def, req, res, strict));
      if (status === 204) {
        res.status(204).end();
        return;
      }
      // the response schema fixes field order and strips anything internal that is not part of the contract
      const out = def.response.safeParse(result);
      // a result the contract cannot describe is our bug, not the client's: a 500, never a 422 after a write
      if (!out.success)
        throw new Error(`response of ${def.method.toUpperCase()} ${def.path} does not match its schema: ${out.error.message}`);
      if (def.produces) res.status(status).type(def.produces).send(out.data);
      else res.status(status).json(out.data);
    };
    if (def.form) this.router[def.method](def.path, formBody, handler);
    else this.router[def.method](def.path, handler);
  }

  /** A GET that writes its own answer in another media type than JSON (see RawRouteDef). */
  rawGet<Q extends AnyObject = AnyObject, P extends AnyObject = AnyObject>(def: RawRouteDef<Q, P>): void {
    this.document(
      { ...def, method: 'get' },
      { 200: { description: def.content.description, content: { [def.content.mediaType]: { schema: def.content.schema } } } },
    );
    this.router.get(def.path, async (req, res) => {
      const { body: _none, ...input } = inputOf({ ...def, body: undefined }, req, res, undefined);
      await def.handler(input);
    });
  }

  /** The route's OpenAPI entry: its parts' schemas, its answers, and the error answers every route may give. */
  private document(
    def: Readonly<{
      method: Method;
      path: string;
      summary: string;
      description?: string;
      tag: string;
      auth?: boolean;
      paid?: boolean;
      body?: z.ZodType | undefined;
      form?: boolean;
      query?: AnyObject | undefined;
      params?: AnyObject | undefined;
      headers?: AnyObject | undefined;
      errors?: readonly number[];
    }>,
    answers: Record<number, { description: string; content?: Record<string, { schema: z.ZodType }> }>,
  ): void {
    const auth = def.auth ?? true;
    const errors: Record<number, Json> = { 422: json(ValidationErrorBody, 'Validation error') };
    if (auth) {
      errors[401] = json(PlainError, 'Missing or invalid API key');
      errors[429] = json(PlainError, 'Too many requests');
    }
    for (const s of def.errors ?? []) {
      const plain = s === 401 || s === 402 || s === 403 || s === 429;
      errors[s] = json(plain ? PlainError : ErrorEnvelope, `Error ${s}`);
    }
    const description =
      def.description ?? (def.paid ? 'Paid operation: unknown body or query fields are rejected with 422 (`extra_forbidden`).' : undefined);
    this.registry.registerPath({
      method: def.method,
      path: def.path.replace(/:([A-Za-z_]+)/g, '{$1}'),
      summary: def.summary,
      ...(description ? { description } : {}),
      tags: [def.tag],
      ...(auth ? {} : { security: [] }),
      request: {
        ...(def.body
          ? { body: { content: { [def.form ? 'application/x-www-form-urlencoded' : 'application/json']: { schema: def.body } } } }
          : {}),
        ...(def.query ? { query: def.query } : {}),
        ...(def.params ? { params: def.params } : {}),
        ...(def.headers ? { headers: def.headers } : {}),
      },
      responses: { ...answers, ...errors },
    });
  }
}

/**
 * A request's parts, validated by the route's own schemas (a paid route's also for fields it does not know), and the
 * context it acts in: an unauthenticated route acts for nobody yet, its events still carrying the request's ids.
 */
function inputOf<B extends z.ZodType, Q extends AnyObject, P extends AnyObject>(
  def: Readonly<{ body?: B | undefined; query?: Q | undefined; params?: P | undefined }>,
  req: Request,
  res: Response,
  strict: { body: ReadonlySet<string>; query: ReadonlySet<string> } | undefined,
): RouteInput<B, Q, P> {
  assertStorableInput(req);
  const body = def.body || strict ? parse(def.body, req, 'body', strict?.body) : undefined;
  const query = def.query || strict ? (parse(def.query, req, 'query', strict?.query) ?? {}) : {};
  const params = def.params ? parse(def.params, req, 'path') : {};
  const requestId = String(res.locals.requestId);
  const ctx = (res.locals.ctx as RequestContext | undefined) ?? {
    accountId: 'anonymous',
    requestId,
    correlationId: requestId,
    actor: 'anonymous',
  };
  // The one cast of the HTTP edge: each part is what its own schema parsed, or, where the route declares none, what
  // its default schema (ZodUndefined, an empty object) would have given; TypeScript cannot tie a generic schema's
  // absence to its default type parameter.
  return { body, query, params, ctx, req, res } as unknown as RouteInput<B, Q, P>;
}

/**
 * Form bodies, flat (`extended: false`: no nested objects). Only carriers' callbacks come as forms, and theirs are
 * small (Twilio's inbound text: some thirty fields, a body of at most 1,600 characters, ten media URLs), so a larger
 * body or more fields is refused with 413 before anything reads it (docs/carriers.md#callbacks).
 */
const formBody = express.urlencoded({ extended: false, limit: FORM_MAX_BYTES, parameterLimit: FORM_MAX_FIELDS });

/** The fields a paid route accepts in one part (none when it declares no schema); a schema without a fixed field list cannot be strict. */
function keysOf(schema: z.ZodType | undefined, path: string): ReadonlySet<string> {
  if (!schema) return new Set();
  const keys = acceptedKeys(schema);
  if (!keys) throw new Error(`paid route ${path}: its body and query schemas must be objects, so that unknown fields can be named`);
  return keys;
}

import { E164 } from '../../agents/agent.schemas.js';
import type { AnyObject, Api, RouteDef } from '../../http/api.js';
import { z } from '../../http/openapi.js';

/** The OpenAPI tag of every /sandbox route. */
export const SANDBOX_TAG = 'sandbox';

/** A `+` left unencoded in a query string arrives as a space: `?to=+1415…` still means +1415…. */
export const QueryE164 = z.preprocess((v) => (typeof v === 'string' && /^ ?\d+$/.test(v) ? `+${v.trim()}` : v), E164);

/**
 * Declares a route of the sandbox API (docs/sandbox.md): tagged `sandbox`, outside the API keys (the admin token
 * guards every /sandbox path: docs/security.md#admin-token-admin-and-sandbox), so it answers 401 and 403 besides its own errors.
 */
export function sandboxRoute<B extends z.ZodType = z.ZodUndefined, Q extends AnyObject = AnyObject, P extends AnyObject = AnyObject>(
  api: Api,
  def: Omit<RouteDef<B, Q, P>, 'tag' | 'auth'>,
): void {
  api.route({ ...def, tag: SANDBOX_TAG, auth: false, errors: [401, 403, ...(def.errors ?? [])] });
}

/** What an inbound message of the sandbox API must hold: something to say (docs/sandbox.md). */
type Inbound = { body: string; media_urls?: readonly string[] | undefined; reaction?: unknown };
export const saysSomething = (what: string): [(b: Inbound) => boolean, { message: string; path: string[] }] => [
  (b) => b.body.trim() !== '' || (b.media_urls?.length ?? 0) > 0 || b.reaction !== undefined,
  { message: `${what} needs a body, media_urls or a reaction`, path: ['body'] },
];

/** The media of an inbound message of the sandbox API: addresses the platform fetches them from. */
export const InboundMediaUrls = z.array(z.url().max(2048)).max(10);

import { E164 } from '../../agents/agent.schemas.js';
import { z } from '../../http/openapi.js';

/** The OpenAPI tag of every /sandbox route. */
export const SANDBOX_TAG = 'sandbox';

/** A `+` left unencoded in a query string arrives as a space: `?to=+1415…` still means +1415…. */
export const QueryE164 = z.preprocess((v) => (typeof v === 'string' && /^ ?\d+$/.test(v) ? `+${v.trim()}` : v), E164);

import { KyselyNumberCallQueries } from '../../projections/calls/call.queries.js';
import type { Capability } from '../capabilities/capability.js';
import { NUMBERS } from '../numbers/tokens.js';
import { PLATFORM } from '../platform/tokens.js';
import { callRoutes } from './calls.routes.js';
import { CALLS } from './tokens.js';

/**
 * Voice calls. Today only its read side exists: a number's call history from the `calls` table, which nothing
 * writes yet (placing and answering calls come with the calls capability's write side).
 */
export const calls = {
  name: 'calls',
  bind: (b) => {
    b.factory(CALLS.NumberCalls, (r) => new KyselyNumberCallQueries(r(PLATFORM.ReadDb)));
  },
  routes: {
    v1: (api, r) => callRoutes(api, { calls: r(CALLS.NumberCalls), numbers: r(NUMBERS.Queries) }),
  },
} as const satisfies Capability;

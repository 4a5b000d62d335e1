import { KyselyNumberMessageQueries } from '../../projections/messaging/message.queries.js';
import type { Capability } from '../capabilities/capability.js';
import { NUMBERS } from '../numbers/tokens.js';
import { PLATFORM } from '../platform/tokens.js';
import { messagingRoutes } from './messaging.routes.js';
import { MESSAGING } from './tokens.js';

/**
 * Messaging. Today only its read side exists: a number's message history from the `messages` table, which
 * nothing writes yet (sending and receiving texts come with the messaging capability's write side).
 */
export const messaging = {
  name: 'messaging',
  bind: (b) => {
    b.factory(MESSAGING.NumberMessages, (r) => new KyselyNumberMessageQueries(r(PLATFORM.ReadDb)));
  },
  routes: {
    v1: (api, r) => messagingRoutes(api, { messages: r(MESSAGING.NumberMessages), numbers: r(NUMBERS.Queries) }),
  },
} as const satisfies Capability;

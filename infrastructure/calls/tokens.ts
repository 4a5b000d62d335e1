import type { NumberCallQueries } from '../../application/calls/call-queries.port.js';
import { token } from '../capabilities/token.js';

/** The calls capability's tokens (its module binds them). */
export const CALLS = {
  NumberCalls: token<NumberCallQueries>('NumberCallQueries'),
} as const;

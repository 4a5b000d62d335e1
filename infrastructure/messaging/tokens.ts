import type { NumberMessageQueries } from '../../application/messaging/message-queries.port.js';
import { token } from '../capabilities/token.js';

/** The messaging capability's tokens (its module binds them). */
export const MESSAGING = {
  NumberMessages: token<NumberMessageQueries>('NumberMessageQueries'),
} as const;

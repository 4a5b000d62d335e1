import type { SipTrunkCommands } from '../../application/sip-trunks/sip-trunk-commands.js';
import type { SipTrunkProviderPort } from '../../application/sip-trunks/sip-trunk-provider.port.js';
import type { SipTrunkQueries } from '../../application/sip-trunks/sip-trunk-queries.port.js';
import { token } from '../capabilities/token.js';

/** The SIP trunk capability's tokens (its module binds them). */
export const SIP_TRUNKS = {
  Provider: token<SipTrunkProviderPort>('SipTrunkProviderPort'),
  Queries: token<SipTrunkQueries>('SipTrunkQueries'),
  Commands: token<SipTrunkCommands>('SipTrunkCommands'),
} as const;

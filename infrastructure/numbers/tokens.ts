import type { CarrierPort } from '../../application/numbers/carrier.port.js';
import type { LookupCachePort } from '../../application/numbers/lookup-cache.port.js';
import type { NumberCommands } from '../../application/numbers/number-commands.js';
import type { NumberLookup } from '../../application/numbers/number-lookup.js';
import type { NumberQueries } from '../../application/numbers/number-queries.port.js';
import type { NumberRenewals } from '../../application/numbers/number-renewals.js';
import { token } from '../capabilities/token.js';

/** The phone-number capability's tokens (its module binds them). */
export const NUMBERS = {
  Carrier: token<CarrierPort>('CarrierPort'),
  LookupCache: token<LookupCachePort>('LookupCachePort'),
  Queries: token<NumberQueries>('NumberQueries'),
  Commands: token<NumberCommands>('NumberCommands'),
  Lookup: token<NumberLookup>('NumberLookup'),
  Renewals: token<NumberRenewals>('NumberRenewals'),
} as const;

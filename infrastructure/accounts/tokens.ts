import type { AccountCommands } from '../../application/accounts/account-commands.js';
import type { AccountQueries } from '../../application/accounts/account-queries.port.js';
import type { Billing } from '../../application/accounts/billing.js';
import type { UsageReport } from '../../application/accounts/usage.js';
import { token } from '../capabilities/token.js';

/** The accounts capability's tokens (its module binds them). */
export const ACCOUNTS = {
  Commands: token<AccountCommands>('AccountCommands'),
  Queries: token<AccountQueries>('AccountQueries'),
  Billing: token<Billing>('Billing'),
  UsageReport: token<UsageReport>('UsageReport'),
} as const;

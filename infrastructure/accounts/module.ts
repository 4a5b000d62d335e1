import { AccountCommands } from '../../application/accounts/account-commands.js';
import { Billing } from '../../application/accounts/billing.js';
import { UsageReport } from '../../application/accounts/usage.js';
import type { AccountErrorCode } from '../../domain/account/errors.js';
import { KyselyAccountQueries } from '../../projections/accounts/account.queries.js';
import { accountsProjector } from '../../projections/accounts/accounts.projector.js';
import { KyselyAnalyticsQueries } from '../../projections/analytics/analytics.queries.js';
import { CALLS } from '../calls/tokens.js';
import type { Capability } from '../capabilities/capability.js';
import * as m003 from '../db/migrations/003-account-ledger.js';
import * as m004 from '../db/migrations/004-api-key-usage.js';
import * as m005 from '../db/migrations/005-usage-daily.js';
import { httpError } from '../http/errors.js';
import { PLATFORM } from '../platform/tokens.js';
import { accountCliCommands } from './accounts.commands.js';
import { accountRoutes } from './accounts.routes.js';
import { adminRoutes } from './admin.routes.js';
import { ACCOUNTS } from './tokens.js';

/** Accounts, API keys, sub-accounts, the ledger and billing, usage; the operator (admin) API. */
export const accounts = {
  name: 'accounts',
  bind: (b, cfg) => {
    b.factory(ACCOUNTS.Queries, (r) => new KyselyAccountQueries(r(PLATFORM.ReadDb), r(PLATFORM.KeptReads)(accountsProjector.name)));
    b.factory(ACCOUNTS.Billing, (r) => new Billing(r(PLATFORM.Executor)));
    b.factory(
      ACCOUNTS.Commands,
      (r) => new AccountCommands(r(PLATFORM.Executor), r(PLATFORM.Ids), r(PLATFORM.ApiKeySecrets), r(ACCOUNTS.Queries)),
    );
    b.factory(
      ACCOUNTS.UsageReport,
      (r) =>
        new UsageReport(r(PLATFORM.Clock), r(ACCOUNTS.Queries), new KyselyAnalyticsQueries(r(PLATFORM.ReadDb)), {
          // the caps the calls capability enforces (docs/calls.md#limits), so usage never publishes another figure
          concurrentCalls: async (accountId) => (await r(CALLS.Slots).accountLimit(accountId)).limit,
          maxCallDurationMinutes: Math.floor(cfg.CALL_MAX_DURATION_SECONDS / 60),
        }),
    );
  },
  routes: {
    v1: (api, r) =>
      accountRoutes(api, {
        commands: r(ACCOUNTS.Commands),
        queries: r(ACCOUNTS.Queries),
        usage: r(ACCOUNTS.UsageReport),
        billing: r(ACCOUNTS.Billing),
      }),
    admin: (api, r) => adminRoutes(api, { accounts: r(ACCOUNTS.Commands) }),
  },
  // usage is counted by the analytics projectors (infrastructure/analytics/module.ts); 005's table is dropped by 120
  projectors: [accountsProjector],
  migrations: { '003-account-ledger': m003, '004-api-key-usage': m004, '005-usage-daily': m005 },
  errors: {
    ACCOUNT_NOT_FOUND: { ...httpError.notFound, fix: 'Check the account id.' },
    API_KEY_NOT_FOUND: { ...httpError.notFound, fix: 'Check the key id.' },
    INSUFFICIENT_BALANCE: { ...httpError.paymentRequired, fix: 'Add credit to the account and retry.' },
    NUMBER_LIMIT_REACHED: {
      ...httpError.plainConflict,
      // the limit counts numbers over the account's life (docs/accounts.md#money-the-ledger-and-the-number-limit): releasing one frees nothing
      fix: "The limit counts every number the account has provisioned, released ones included: ask the platform's operator for a higher limit.",
    },
  } satisfies Record<AccountErrorCode, unknown>,
  cli: accountCliCommands,
} as const satisfies Capability;

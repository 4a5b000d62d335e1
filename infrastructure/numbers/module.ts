import { numberWebhookMappings } from '../../application/numbers/number.mappings.js';
import { NumberCommands } from '../../application/numbers/number-commands.js';
import { NumberLookup } from '../../application/numbers/number-lookup.js';
import { NumberProcess } from '../../application/numbers/number-process.js';
import { NumberRenewals } from '../../application/numbers/number-renewals.js';
import type { PhoneNumberErrorCode } from '../../domain/phone-number/errors.js';
import { KyselyNumberQueries } from '../../projections/numbers/number.queries.js';
import { phoneNumbersProjector } from '../../projections/numbers/phone-numbers.projector.js';
import { ACCOUNTS } from '../accounts/tokens.js';
import { KyselyLookupCache } from '../adapters/kysely-lookup-cache.js';
import type { Capability } from '../capabilities/capability.js';
import * as m020 from '../db/migrations/020-phone-numbers.js';
import * as m023 from '../db/migrations/023-number-attach-order.js';
import * as m025 from '../db/migrations/025-drop-attached-position.js';
import * as m026 from '../db/migrations/026-phone-number-e164-index.js';
import * as m027 from '../db/migrations/027-imported-numbers.js';
import { httpError } from '../http/errors.js';
import { PLATFORM } from '../platform/tokens.js';
import { UnconfiguredCarrier } from '../providers/unconfigured-telecom.js';
import { PassWorker } from '../workers.js';
import { numberRoutes } from './numbers.routes.js';
import { NUMBERS } from './tokens.js';

/**
 * Phone numbers and line-type lookup: the carrier (the sandbox kit's carrier in sandbox mode; a placeholder that
 * fails in live mode until a real adapter exists), provisioning and release driven by a process manager, and
 * monthly renewal.
 */
export const numbers = {
  name: 'numbers',
  bind: (b, cfg) => {
    // the carrier CARRIER chooses (docs/adding-a-channel.md#a-carrier-for-texts); none: number operations answer 502
    b.factory(NUMBERS.Carrier, (r) => r(PLATFORM.Carrier)?.numbers(r) ?? new UnconfiguredCarrier());
    b.toClass(NUMBERS.LookupCache, KyselyLookupCache);
    b.factory(NUMBERS.Queries, (r) => new KyselyNumberQueries(r(PLATFORM.ReadDb), r(PLATFORM.KeptReads)(phoneNumbersProjector.name)));
    b.factory(
      NUMBERS.Commands,
      (r) =>
        new NumberCommands(r(PLATFORM.Executor), r(PLATFORM.Ids), r(PLATFORM.ReadModels), r(NUMBERS.Queries), r(ACCOUNTS.Billing), {
          provisioningTimeoutMs: cfg.NUMBER_PROVISIONING_TIMEOUT_MS,
        }),
    );
    b.factory(
      NUMBERS.Lookup,
      (r) =>
        new NumberLookup(r(PLATFORM.Ids), r(PLATFORM.Clock), r(NUMBERS.Carrier), r(NUMBERS.LookupCache), r(ACCOUNTS.Billing), {
          cacheTtlSeconds: cfg.NUMBER_LOOKUP_CACHE_TTL_SECONDS,
        }),
    );
    b.factory(
      NUMBERS.Renewals,
      (r) => new NumberRenewals(r(PLATFORM.Executor), r(ACCOUNTS.Billing), r(NUMBERS.Queries), r(PLATFORM.Logger)),
    );
  },
  routes: {
    v1: (api, r) => numberRoutes(api, { commands: r(NUMBERS.Commands), queries: r(NUMBERS.Queries), lookup: r(NUMBERS.Lookup) }),
  },
  projectors: [phoneNumbersProjector],
  reactors: (r) => [
    new NumberProcess(
      r(PLATFORM.Executor),
      r(NUMBERS.Carrier),
      r(ACCOUNTS.Billing),
      r(PLATFORM.ReadModels),
      r(NUMBERS.Queries),
      r(PLATFORM.Logger),
    ),
  ],
  workers: (r, cfg) => {
    // the monthly renewal: each pass charges the numbers whose paid month has ended by the Clock's now
    const renewals = r(NUMBERS.Renewals);
    return [
      new PassWorker('number-renewal', () => renewals.renewDue(), r(PLATFORM.Logger), {
        intervalMs: cfg.NUMBER_RENEWAL_INTERVAL_MS,
        logged: 'number renewals',
      }),
    ];
  },
  webhookMappings: numberWebhookMappings,
  migrations: {
    '020-phone-numbers': m020,
    '023-number-attach-order': m023,
    '025-drop-attached-position': m025,
    '026-phone-number-e164-index': m026,
    '027-imported-numbers': m027,
  },
  errors: {
    PHONE_NUMBER_NOT_FOUND: { ...httpError.notFound, fix: 'Check the number id: GET /v1/numbers lists the numbers of this account.' },
    NUMBER_UNAVAILABLE: { ...httpError.plainConflict, fix: 'Try another areaCode, or omit it to take any number of the country.' },
    PHONE_NUMBER_RELEASED: httpError.conflict,
    NUMBER_PROVISIONING_PENDING: httpError.unavailable,
  } satisfies Record<PhoneNumberErrorCode, unknown>,
} as const satisfies Capability;

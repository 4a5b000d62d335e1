import { inject, injectable } from 'inversify';
import type { Kysely } from 'kysely';
import type { LineInfo } from '../../application/numbers/carrier.port.js';
import type { CachedLookup, LookupCachePort } from '../../application/numbers/lookup-cache.port.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { PLATFORM } from '../platform/tokens.js';

/** Paid lookups per account and number, in `number_lookup_cache`; a newer lookup replaces an older one. */
@injectable()
export class KyselyLookupCache implements LookupCachePort {
  constructor(@inject(PLATFORM.ReadDb) private readonly db: Kysely<ReadDb>) {}

  async get(accountId: string, phoneNumbers: readonly string[], freshSince: string): Promise<Map<string, CachedLookup>> {
    if (phoneNumbers.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('number_lookup_cache')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('phone_number', 'in', [...phoneNumbers])
      .where('looked_up_at', '>=', freshSince)
      .execute();
    return new Map(
      rows.map((r) => [
        r.phone_number,
        {
          info: (typeof r.result === 'string' ? JSON.parse(r.result) : r.result) as LineInfo,
          lookedUpAt: new Date(r.looked_up_at).toISOString(),
        },
      ]),
    );
  }

  async put(accountId: string, entries: readonly CachedLookup[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db
      .insertInto('number_lookup_cache')
      .values(
        entries.map((e) => ({
          account_id: accountId,
          phone_number: e.info.phoneNumber,
          result: JSON.stringify(e.info),
          looked_up_at: e.lookedUpAt,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'phone_number'])
          .doUpdateSet((eb) => ({ result: eb.ref('excluded.result'), looked_up_at: eb.ref('excluded.looked_up_at') })),
      )
      .execute();
  }
}

import type { Kysely } from 'kysely';
import type { UsageMetric, UsageQueries } from '../../application/accounts/usage.port.js';
import type { ReadDb } from '../shared/read-db.js';

export class KyselyUsageQueries implements UsageQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async count(accountId: string, metric: UsageMetric, from: string | null, to: string): Promise<number> {
    let q = this.db
      .selectFrom('usage_daily')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('count'), eb.lit(0)).as('n'))
      .where('account_id', '=', accountId)
      .where('metric', '=', metric)
      .where('day', '<', to);
    if (from) q = q.where('day', '>=', from);
    const r = await q.executeTakeFirstOrThrow();
    return Number(r.n);
  }
}

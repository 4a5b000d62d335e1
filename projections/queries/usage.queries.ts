import type { Kysely } from 'kysely';
import type { UsageMetric, UsageQueries } from '../../application/accounts/usage.port.js';
import '../messaging/tables.js';
import type { ReadDb } from '../shared/read-db.js';

export class KyselyUsageQueries implements UsageQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async count(accountId: string, metric: UsageMetric, from: string | null, to: string): Promise<number> {
    // texts are counted per number, agent and direction by the messaging analytics projector (message_stats_daily)
    if (metric === 'messages') {
      let q = this.db
        .selectFrom('message_stats_daily')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('messages'), eb.lit(0)).as('n'))
        .where('account_id', '=', accountId)
        .where('day', '<', to);
      if (from) q = q.where('day', '>=', from);
      return Number((await q.executeTakeFirstOrThrow()).n);
    }
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

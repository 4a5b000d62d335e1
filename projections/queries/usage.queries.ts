import type { Kysely } from 'kysely';
import type { UsageMetric, UsageQueries } from '../../application/accounts/usage.port.js';
import '../messaging/tables.js';
import type { ReadDb } from '../shared/read-db.js';

/** the usage metrics of texts, read from the messaging analytics */
const MESSAGE_METRICS = {
  messages: { column: 'messages', direction: null },
  messages_sent: { column: 'messages', direction: 'outbound' },
  messages_received: { column: 'messages', direction: 'inbound' },
  message_segments: { column: 'segments', direction: null },
} as const;

export class KyselyUsageQueries implements UsageQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async count(accountId: string, metric: UsageMetric, from: string | null, to: string): Promise<number> {
    // texts are counted per number, agent and direction by the messaging analytics projector (message_stats_daily)
    const texts = MESSAGE_METRICS[metric as keyof typeof MESSAGE_METRICS];
    if (texts) {
      let q = this.db
        .selectFrom('message_stats_daily')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<string>(texts.column), eb.lit(0)).as('n'))
        .where('account_id', '=', accountId)
        .where('day', '<', to);
      if (from) q = q.where('day', '>=', from);
      if (texts.direction) q = q.where('direction', '=', texts.direction);
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

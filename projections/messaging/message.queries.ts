import type { Kysely } from 'kysely';
import type { MessageView, NumberMessageQueries } from '../../application/messaging/message-queries.port.js';
import type { ReadDb } from '../shared/read-db.js';

const iso = (d: Date | string) => new Date(d).toISOString();
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

/** A number's messages, cursor pages by time (the `messages` table; docs/messaging.md). */
export class KyselyNumberMessageQueries implements NumberMessageQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async messages(accountId: string, numberId: string, q: { limit: number; before?: string | undefined; after?: string | undefined }) {
    let query = this.db.selectFrom('messages').selectAll().where('account_id', '=', accountId).where('phone_number_id', '=', numberId);
    if (q.before) query = query.where('created_at', '<', q.before);
    if (q.after) query = query.where('created_at', '>', q.after);
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('message_id', 'desc')
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(
      (r): MessageView => ({
        id: r.message_id,
        conversationId: r.conversation_id,
        phoneNumberId: r.phone_number_id ?? numberId,
        from: r.from_number,
        to: r.to_number,
        body: r.body,
        direction: r.direction,
        channel: r.channel,
        status: r.status,
        mediaUrls: json<string[]>(r.media_urls) ?? [],
        at: iso(r.created_at),
      }),
    );
    return { data, hasMore: rows.length > q.limit };
  }
}

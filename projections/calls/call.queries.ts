import type { Kysely } from 'kysely';
import type { CallSummaryView, NumberCallQueries } from '../../application/calls/call-queries.port.js';
import type { Page, PageOf } from '../../application/shared/page.js';
import type { ReadDb } from '../shared/read-db.js';

const iso = (d: Date | string) => new Date(d).toISOString();
const isoOrNull = (d: Date | string | null) => (d === null ? null : iso(d));

/** A number's calls, offset pages, newest first (the `calls` table). */
export class KyselyNumberCallQueries implements NumberCallQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async calls(accountId: string, numberId: string, page: Page): Promise<PageOf<CallSummaryView>> {
    const base = this.db.selectFrom('calls').where('account_id', '=', accountId).where('phone_number_id', '=', numberId);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('started_at', 'desc').orderBy('call_id', 'desc').limit(page.limit).offset(page.offset).execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return {
      total: Number(count.n),
      data: rows.map(
        (r): CallSummaryView => ({
          id: r.call_id,
          agentId: r.agent_id,
          phoneNumberId: r.phone_number_id,
          phoneNumber: r.phone_number,
          fromNumber: r.from_number,
          toNumber: r.to_number,
          direction: r.direction,
          status: r.status,
          startedAt: iso(r.started_at),
          endedAt: isoOrNull(r.ended_at),
          durationSeconds: r.duration_seconds,
          lastTranscriptSnippet: r.last_transcript_snippet,
        }),
      ),
    };
  }
}

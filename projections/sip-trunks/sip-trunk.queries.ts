import type { Selectable } from 'kysely';
import { type Kysely, sql } from 'kysely';
import type { Page, PageOf } from '../../application/shared/page.js';
import type {
  SipTrunkQueries,
  SipTrunkView,
  TrunkTerminationQueries,
  TrunkTerminationRecord,
} from '../../application/sip-trunks/sip-trunk-queries.port.js';
import { NO_TERMINATION, type OriginationUri, type SipTrunkTermination } from '../../domain/sip-trunk/sip-trunk.decider.js';
import type { ReadDb } from '../shared/read-db.js';
import type { SipTrunksTable } from './tables.js';

const iso = (d: Date | string) => new Date(d).toISOString();
const _isoOrNull = (d: Date | string | null) => (d === null ? null : iso(d));
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

const termination = (r: Selectable<SipTrunksTable>): SipTrunkTermination =>
  json<SipTrunkTermination | null>(r.termination) ?? NO_TERMINATION;

const toTrunk = (r: Selectable<SipTrunksTable>): SipTrunkView => ({
  id: r.trunk_id,
  name: r.name,
  transfers: r.transfers,
  transferCallerId: r.transfer_caller_id,
  uris: json<OriginationUri[]>(r.uris),
  terminationUri: r.termination_uri,
  termination: { usernames: termination(r).credentials.map((c) => c.username), addresses: termination(r).addresses },
  numberIds: json<string[]>(r.number_ids),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

/** SIP trunks of one account; soft-deleted ones are gone from every read. */
export class KyselySipTrunkQueries implements SipTrunkQueries, TrunkTerminationQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  private live(accountId: string) {
    return this.db.selectFrom('sip_trunks').where('account_id', '=', accountId).where('deleted_at', 'is', null);
  }

  async list(accountId: string, page: Page): Promise<PageOf<SipTrunkView>> {
    const [rows, count] = await Promise.all([
      this.live(accountId).selectAll().orderBy('created_at').orderBy('trunk_id').limit(page.limit).offset(page.offset).execute(),
      this.live(accountId)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return { data: rows.map(toTrunk), total: Number(count.n) };
  }

  async get(accountId: string, trunkId: string): Promise<SipTrunkView | null> {
    const r = await this.live(accountId).selectAll().where('trunk_id', '=', trunkId).executeTakeFirst();
    return r ? toTrunk(r) : null;
  }

  async terminations(): Promise<TrunkTerminationRecord[]> {
    const rows = await this.db
      .selectFrom('sip_trunks')
      .select(['trunk_id', 'account_id', 'termination'])
      .where('deleted_at', 'is', null)
      .where(sql<boolean>`jsonb_array_length(termination->'credentials') + jsonb_array_length(termination->'addresses') > 0`)
      .orderBy('trunk_id')
      .execute();
    return rows.map((r) => ({
      trunkId: r.trunk_id,
      accountId: r.account_id,
      termination: json<SipTrunkTermination | null>(r.termination) ?? NO_TERMINATION,
    }));
  }
}

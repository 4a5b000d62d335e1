import { type Kysely, sql } from 'kysely';
import type { Page, PageOf } from '../../application/accounts/account-queries.port.js';
import type { NumberQueries, PhoneNumberView } from '../../application/numbers/number-queries.port.js';
import { NOT_KEPT, type ReadKeeper } from '../shared/kept-reads.js';
import { indexed, type ReadDb } from '../shared/read-db.js';
import type { PhoneNumbersTable } from './tables.js';

const iso = (d: Date | string) => new Date(d).toISOString();
const isoOrNull = (d: Date | string | null) => (d === null ? null : iso(d));

const toNumber = (r: PhoneNumbersTable): PhoneNumberView => ({
  id: r.number_id,
  phoneNumber: r.phone_number ?? '',
  country: r.country,
  areaCode: r.area_code,
  status: r.status as PhoneNumberView['status'],
  type: r.type,
  agentId: r.agent_id,
  sipTrunkId: r.sip_trunk_id,
  renewalStatus: r.renewal_status as PhoneNumberView['renewalStatus'],
  paidThrough: r.status === 'active' ? isoOrNull(r.paid_through) : null,
  createdAt: iso(r.created_at ?? r.requested_at),
  releasedAt: isoOrNull(r.released_at),
});

/** Numbers of one account. Only provisioned numbers exist for the API: active, and released ones by id. */
export class KyselyNumberQueries implements NumberQueries {
  constructor(
    private readonly db: Kysely<ReadDb>,
    /** this read model's answers kept until its next batch, where every batch is heard (docs/event-store.md#kept-reads) */
    private readonly kept: ReadKeeper = NOT_KEPT,
  ) {}

  async list(accountId: string, page: Page): Promise<PageOf<PhoneNumberView>> {
    const active = this.db.selectFrom('phone_numbers').where('account_id', '=', accountId).where('status', '=', 'active');
    const [rows, count] = await Promise.all([
      active.selectAll().orderBy('created_at').orderBy('number_id').limit(page.limit).offset(page.offset).execute(),
      active.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { data: rows.map(toNumber), total: Number(count.n) };
  }

  /**
   * The number that holds an E.164 now. A carrier sells a number to one holder at a time; should the read model
   * ever show two active (a carrier re-sold a number whose release never reached this platform, or a sandbox
   * whose inventory was reset while the event log was kept), the one provisioned last in the log holds it.
   */
  async activeByPhoneNumber(phoneNumber: string): Promise<(PhoneNumberView & { accountId: string }) | null> {
    const look = async () => {
      const row = await this.db
        .selectFrom('phone_numbers')
        .selectAll()
        .where('phone_number', '=', phoneNumber)
        .where('status', '=', indexed('active'))
        .orderBy('active_order', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row ? { ...toNumber(row), accountId: row.account_id } : null;
    };
    // every inbound text and call, and every send, asks it; a carrier's callback may name any number: only found ones are kept
    return this.kept.read(`active\u0000${phoneNumber}`, look, { keepMissing: false });
  }

  async get(accountId: string, numberId: string): Promise<PhoneNumberView | null> {
    const r = await this.db
      .selectFrom('phone_numbers')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('number_id', '=', numberId)
      .where('status', 'in', ['active', 'released'])
      .executeTakeFirst();
    return r ? toNumber(r) : null;
  }

  async attachedTo(accountId: string, agentId: string): Promise<string[]> {
    const look = async () => {
      const rows = await this.db
        .selectFrom('phone_numbers')
        .select('number_id')
        .where('account_id', '=', accountId)
        .where('agent_id', '=', agentId)
        .where('status', '=', 'active')
        .orderBy('attached_order')
        .execute();
      return rows.map((r) => r.number_id);
    };
    // every send by agent asks it, twice (its line, and its chat-app lines); the agent is the account's, found before
    return (await this.kept.read(`attached\u0000${accountId}\u0000${agentId}`, look, { keepMissing: true })) ?? [];
  }

  async dueForRenewal(now: string, limit: number): Promise<{ numberId: string; accountId: string }[]> {
    const rows = await this.db
      .selectFrom('phone_numbers')
      .select(['number_id', 'account_id'])
      .where('status', '=', 'active')
      .where('paid_through', '<=', now)
      .orderBy('paid_through')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ numberId: r.number_id, accountId: r.account_id }));
  }

  async trunksLinkedTo(accountId: string, numberId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('sip_trunks')
      .select('trunk_id')
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .where(sql<boolean>`number_ids @> ${JSON.stringify([numberId])}::jsonb`)
      .execute();
    return rows.map((r) => r.trunk_id);
  }
}

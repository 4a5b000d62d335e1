import { sql, type Kysely } from 'kysely';
import type {
  CallSummaryView, MessageView, NumberActivityQueries, NumberQueries, PhoneNumberView, SipTrunkQueries, SipTrunkView,
} from '../../application/ports/number-queries.port.js';
import type { Page, PageOf } from '../../application/ports/queries.port.js';
import type { OriginationUri } from '../../domain/sip-trunk/sip-trunk.decider.js';
import type { PhoneNumbersTable, SipTrunksTable } from '../shared/number-tables.js';
import type { ReadDb } from '../shared/read-db.js';

const iso = (d: Date | string) => new Date(d).toISOString();
const isoOrNull = (d: Date | string | null) => (d === null ? null : iso(d));
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

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
  constructor(private readonly db: Kysely<ReadDb>) {}

  async list(accountId: string, page: Page): Promise<PageOf<PhoneNumberView>> {
    const active = this.db.selectFrom('phone_numbers').where('account_id', '=', accountId).where('status', '=', 'active');
    const [rows, count] = await Promise.all([
      active.selectAll().orderBy('created_at').orderBy('number_id').limit(page.limit).offset(page.offset).execute(),
      active.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { data: rows.map(toNumber), total: Number(count.n) };
  }

  async get(accountId: string, numberId: string): Promise<PhoneNumberView | null> {
    const r = await this.db.selectFrom('phone_numbers').selectAll()
      .where('account_id', '=', accountId).where('number_id', '=', numberId).where('status', 'in', ['active', 'released']).executeTakeFirst();
    return r ? toNumber(r) : null;
  }

  async attachedTo(accountId: string, agentId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('phone_numbers').select('number_id')
      .where('account_id', '=', accountId).where('agent_id', '=', agentId).where('status', '=', 'active')
      .orderBy('attached_order').execute();
    return rows.map((r) => r.number_id);
  }

  async dueForRenewal(now: string, limit: number): Promise<{ numberId: string; accountId: string }[]> {
    const rows = await this.db.selectFrom('phone_numbers').select(['number_id', 'account_id'])
      .where('status', '=', 'active').where('paid_through', '<=', now).orderBy('paid_through').limit(limit).execute();
    return rows.map((r) => ({ numberId: r.number_id, accountId: r.account_id }));
  }

  async trunksLinkedTo(accountId: string, numberId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('sip_trunks').select('trunk_id')
      .where('account_id', '=', accountId).where('deleted_at', 'is', null)
      .where(sql<boolean>`number_ids @> ${JSON.stringify([numberId])}::jsonb`).execute();
    return rows.map((r) => r.trunk_id);
  }
}

const toTrunk = (r: SipTrunksTable): SipTrunkView => ({
  id: r.trunk_id, name: r.name, transfers: r.transfers, transferCallerId: r.transfer_caller_id, uris: json<OriginationUri[]>(r.uris),
  terminationUri: r.termination_uri, numberIds: json<string[]>(r.number_ids), createdAt: iso(r.created_at), updatedAt: iso(r.updated_at),
});

/** SIP trunks of one account; soft-deleted ones are gone from every read. */
export class KyselySipTrunkQueries implements SipTrunkQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  private live(accountId: string) {
    return this.db.selectFrom('sip_trunks').where('account_id', '=', accountId).where('deleted_at', 'is', null);
  }

  async list(accountId: string, page: Page): Promise<PageOf<SipTrunkView>> {
    const [rows, count] = await Promise.all([
      this.live(accountId).selectAll().orderBy('created_at').orderBy('trunk_id').limit(page.limit).offset(page.offset).execute(),
      this.live(accountId).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { data: rows.map(toTrunk), total: Number(count.n) };
  }

  async get(accountId: string, trunkId: string): Promise<SipTrunkView | null> {
    const r = await this.live(accountId).selectAll().where('trunk_id', '=', trunkId).executeTakeFirst();
    return r ? toTrunk(r) : null;
  }
}

/** A number's messages (cursor pages by time) and calls (offset pages), from the messaging and calls read models. */
export class KyselyNumberActivityQueries implements NumberActivityQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async messages(accountId: string, numberId: string, q: { limit: number; before?: string | undefined; after?: string | undefined }) {
    let query = this.db.selectFrom('messages').selectAll().where('account_id', '=', accountId).where('phone_number_id', '=', numberId);
    if (q.before) query = query.where('created_at', '<', q.before);
    if (q.after) query = query.where('created_at', '>', q.after);
    const rows = await query.orderBy('created_at', 'desc').orderBy('message_id', 'desc').limit(q.limit + 1).execute();
    const data = rows.slice(0, q.limit).map((r): MessageView => ({
      id: r.message_id, conversationId: r.conversation_id, phoneNumberId: r.phone_number_id ?? numberId, from: r.from_number, to: r.to_number,
      body: r.body, direction: r.direction, channel: r.channel, status: r.status, mediaUrls: json<string[]>(r.media_urls) ?? [], at: iso(r.created_at),
    }));
    return { data, hasMore: rows.length > q.limit };
  }

  async calls(accountId: string, numberId: string, page: Page): Promise<PageOf<CallSummaryView>> {
    const base = this.db.selectFrom('calls').where('account_id', '=', accountId).where('phone_number_id', '=', numberId);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('started_at', 'desc').orderBy('call_id', 'desc').limit(page.limit).offset(page.offset).execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return {
      total: Number(count.n),
      data: rows.map((r): CallSummaryView => ({
        id: r.call_id, agentId: r.agent_id, phoneNumberId: r.phone_number_id, phoneNumber: r.phone_number, fromNumber: r.from_number, toNumber: r.to_number,
        direction: r.direction, status: r.status, startedAt: iso(r.started_at), endedAt: isoOrNull(r.ended_at), durationSeconds: r.duration_seconds,
        lastTranscriptSnippet: r.last_transcript_snippet,
      })),
    };
  }
}

import type { Kysely } from 'kysely';
import type { CapabilityView, ContactCardView, LocationView, RichLineView, RichQueries } from '../../application/rich/rich-queries.port.js';
import { CompiledOnce } from '../shared/compiled-once.js';
import { NOT_KEPT, type ReadKeeper } from '../shared/kept-reads.js';
import { indexed, type ReadDb } from '../shared/read-db.js';
import './tables.js';

const iso = (d: Date | string) => new Date(d).toISOString();

/** The rich channel's queries over its read models; each filters on the account. */
export class KyselyRichQueries implements RichQueries {
  /** asked on every send, for the channels available on its line (docs/event-store.md#compiled-once) */
  private readonly activeLine;

  constructor(
    private readonly db: Kysely<ReadDb>,
    /** this read model's answers kept until its next batch, where every batch is heard (docs/event-store.md#kept-reads) */
    private readonly kept: ReadKeeper = NOT_KEPT,
  ) {
    this.activeLine = new CompiledOnce(db, (db, v: { accountId: string; numberId: string }) =>
      db
        .selectFrom('rich_lines')
        .select(['number_id', 'phone_number', 'activated_at'])
        .where('account_id', '=', v.accountId)
        .where('number_id', '=', v.numberId)
        .where('status', '=', 'active'),
    );
  }

  async lines(accountId: string): Promise<RichLineView[]> {
    const rows = await this.db
      .selectFrom('rich_lines')
      .select(['number_id', 'phone_number', 'activated_at'])
      .where('account_id', '=', accountId)
      .where('status', '=', indexed('active'))
      .orderBy('activated_at')
      .orderBy('number_id')
      .execute();
    return rows.map((r) => ({ numberId: r.number_id, phoneNumber: r.phone_number, activatedAt: iso(r.activated_at) }));
  }

  async line(accountId: string, numberId: string): Promise<RichLineView | null> {
    const look = async () => {
      const r = await this.activeLine.executeTakeFirst({ accountId, numberId });
      return r ? { numberId: r.number_id, phoneNumber: r.phone_number, activatedAt: iso(r.activated_at) } : null;
    };
    // most sending lines are not rich ones: "none" is kept too
    return this.kept.read(`line\u0000${accountId}\u0000${numberId}`, look, { keepMissing: true });
  }

  async capability(accountId: string, phoneNumber: string): Promise<CapabilityView | null> {
    const r = await this.db
      .selectFrom('rich_capabilities')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('phone_number', '=', phoneNumber)
      .executeTakeFirst();
    return r ? { phoneNumber: r.phone_number, imessage: r.imessage, sms: r.sms, checkedAt: iso(r.checked_at) } : null;
  }

  async card(accountId: string, numberId: string): Promise<ContactCardView | null> {
    const r = await this.db
      .selectFrom('rich_contact_cards')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('number_id', '=', numberId)
      .where('status', '=', 'set')
      .executeTakeFirst();
    return r ? { firstName: r.first_name, lastName: r.last_name, displayName: r.display_name, hasAvatar: r.has_avatar } : null;
  }

  async location(accountId: string, phoneNumber: string): Promise<LocationView | null> {
    const r = await this.db
      .selectFrom('rich_locations')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('phone_number', '=', phoneNumber)
      .executeTakeFirst();
    if (!r) return null;
    return {
      phoneNumber: r.phone_number,
      latitude: r.latitude === null ? null : Number(r.latitude),
      longitude: r.longitude === null ? null : Number(r.longitude),
      status: r.status as LocationView['status'],
      lastUpdated: Number(r.last_updated),
    };
  }
}

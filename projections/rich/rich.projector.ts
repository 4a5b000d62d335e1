import type { Insertable, Kysely } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { CapabilityCheckEvent } from '../../domain/rich/capability-check.decider.js';
import type { ContactCardEvent } from '../../domain/rich/contact-card.decider.js';
import type { LocationRefreshEvent } from '../../domain/rich/location-refresh.decider.js';
import type { RichLineEvent } from '../../domain/rich/rich-line.decider.js';
import { guarded } from '../shared/guarded.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';
import type { RichContactCardsTable } from './tables.js';

export type RichProjected =
  | RichLineEvent
  | Extract<CapabilityCheckEvent, { type: 'ContactCapabilitiesChecked' }>
  | Extract<ContactCardEvent, { type: 'ContactCardSet' | 'ContactCardDeleted' }>
  | Extract<LocationRefreshEvent, { type: 'ContactLocationsReported' }>;

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

type CardEvent = RecordedEvent<Extract<RichProjected, { type: 'ContactCardSet' | 'ContactCardDeleted' }>>;
/** A number's contact card as its stream last had it: created, or moved only by a later revision of that stream. */
const putContactCard = (
  db: Kysely<ReadDb>,
  e: CardEvent,
  card: Pick<Insertable<RichContactCardsTable>, 'status' | 'first_name' | 'last_name' | 'display_name' | 'has_avatar'>,
) => {
  const values = { account_id: e.data.accountId, ...card, version: e.data.version, revision: rowRevision(e) };
  return db
    .insertInto('rich_contact_cards')
    .values({ number_id: e.data.numberId, ...values })
    .onConflict((oc) => oc.column('number_id').doUpdateSet(values).where('rich_contact_cards.revision', '<', rowRevision(e)))
    .execute();
};

/**
 * The rich channel's read models (docs/rich-messaging.md): its lines and contact cards, each row guarded by its own
 * stream's revision; the latest capability check of each number an account asked about and the latest shared
 * location of each contact, guarded by the time the provider answered (many streams write one row, and the newest
 * answer wins whatever order they are applied in). A replay changes nothing.
 */
export const richProjector = defineProjector<RichProjected>({
  name: 'rich_v1',
  // it only writes: a batch's writes and its checkpoint go as one message (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['rich_lines', 'rich_capabilities', 'rich_contact_cards', 'rich_locations'],
  on: {
    async RichLineActivated(db, e) {
      const d = e.data;
      const values = {
        account_id: d.accountId,
        phone_number: d.phoneNumber,
        status: 'active',
        activated_at: d.activatedAt,
        revision: rowRevision(e),
      };
      await db
        .insertInto('rich_lines')
        .values({ number_id: d.numberId, ...values })
        .onConflict((oc) => oc.column('number_id').doUpdateSet(values).where('rich_lines.revision', '<', rowRevision(e)))
        .execute();
    },
    async RichLineDeactivated(db, e) {
      await guarded(db.updateTable('rich_lines'), { number_id: e.data.numberId }, e)
        .set({ status: 'inactive', revision: rowRevision(e) })
        .execute();
    },
    async ContactCapabilitiesChecked(db, e) {
      const d = e.data;
      const values = { imessage: d.imessage, sms: d.sms, checked_at: d.checkedAt, check_id: d.checkId };
      await db
        .insertInto('rich_capabilities')
        .values({ account_id: d.accountId, phone_number: d.phoneNumber, ...values })
        .onConflict((oc) =>
          oc.columns(['account_id', 'phone_number']).doUpdateSet(values).where('rich_capabilities.checked_at', '<', d.checkedAt),
        )
        .execute();
    },
    async ContactCardSet(db, e) {
      const d = e.data;
      await putContactCard(db, e, {
        status: 'set',
        first_name: d.names.firstName,
        last_name: d.names.lastName,
        display_name: d.names.displayName,
        has_avatar: d.avatar !== null,
      });
    },
    async ContactCardDeleted(db, e) {
      await putContactCard(db, e, { status: 'deleted', first_name: null, last_name: null, display_name: null, has_avatar: false });
    },
    async ContactLocationsReported(db, e) {
      const d = e.data;
      for (const l of d.locations) {
        const values = {
          number_id: l.numberId,
          status: l.sharing ? 'active' : 'not_sharing',
          latitude: l.sharing ? l.latitude : null,
          longitude: l.sharing ? l.longitude : null,
          last_updated: seconds(l.fixAt ?? d.reportedAt),
          reported_at: d.reportedAt,
        };
        await db
          .insertInto('rich_locations')
          .values({ account_id: d.accountId, phone_number: l.phoneNumber, ...values })
          .onConflict((oc) =>
            oc.columns(['account_id', 'phone_number']).doUpdateSet(values).where('rich_locations.reported_at', '<', d.reportedAt),
          )
          .execute();
      }
    },
  },
});

import type { CarrierEvent } from '../../domain/carrier/carrier.decider.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import './tables.js';

/** `sip_carriers`: each carrier's settings as recorded (passwords sealed); deleted carriers are kept, marked. */
export const carriersProjector = defineProjector<CarrierEvent>({
  name: 'sip_carriers_v1',
  tables: ['sip_carriers'],
  on: {
    async CarrierCreated(db, e) {
      const row = {
        name: e.data.settings.name,
        settings: JSON.stringify(e.data.settings),
        status: 'active',
        created_at: e.data.createdAt,
        updated_at: e.data.createdAt,
        revision: rowRevision(e),
      };
      // created again after a delete: the same row, guarded by its revision
      await db
        .insertInto('sip_carriers')
        .values({ carrier_id: e.data.carrierId, ...row })
        .onConflict((oc) => oc.column('carrier_id').doUpdateSet(row).where('sip_carriers.revision', '<', rowRevision(e)))
        .execute();
    },
    async CarrierChanged(db, e) {
      await db
        .updateTable('sip_carriers')
        .set({
          name: e.data.settings.name,
          settings: JSON.stringify(e.data.settings),
          updated_at: e.data.changedAt,
          revision: rowRevision(e),
        })
        .where('carrier_id', '=', e.data.carrierId)
        .where('revision', '<', rowRevision(e))
        .execute();
    },
    async CarrierDeleted(db, e) {
      await db
        .updateTable('sip_carriers')
        .set({ status: 'deleted', updated_at: e.data.deletedAt, revision: rowRevision(e) })
        .where('carrier_id', '=', e.data.carrierId)
        .where('revision', '<', rowRevision(e))
        .execute();
    },
  },
});

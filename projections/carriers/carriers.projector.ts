import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { CarrierEvent } from '../../domain/carrier/carrier.decider.js';
import { guardedRow } from '../shared/guarded.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import './tables.js';

/** The carrier's row, guarded: matches only while the row reflects an older revision of the stream. */
const carrier = guardedRow(
  (db) => db.updateTable('sip_carriers'),
  (e: RecordedEvent<CarrierEvent>) => ({ carrier_id: e.data.carrierId }),
);

/** `sip_carriers`: each carrier's settings as recorded (passwords sealed); deleted carriers are kept, marked. */
export const carriersProjector = defineProjector<CarrierEvent>({
  name: 'sip_carriers_v1',
  // it only writes: a batch's writes and its checkpoint go as one message (docs/event-store.md#pipelined-batches)
  pipelined: true,
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
    CarrierChanged: (db, e) =>
      carrier(db, e, { name: e.data.settings.name, settings: JSON.stringify(e.data.settings), updated_at: e.data.changedAt }),
    CarrierDeleted: (db, e) => carrier(db, e, { status: 'deleted', updated_at: e.data.deletedAt }),
  },
});

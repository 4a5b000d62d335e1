import { type Kysely, sql } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import { NO_TERMINATION, type SipTrunkChanges, type SipTrunkEvent, terminationOf } from '../../domain/sip-trunk/sip-trunk.decider.js';
import { guardedRow } from '../shared/guarded.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';

/** The trunk's row, guarded: matches only while the row reflects an older revision of the stream. */
const trunk = guardedRow(
  (db) => db.updateTable('sip_trunks'),
  (e: RecordedEvent<SipTrunkEvent>) => ({ trunk_id: e.data.trunkId }),
);

const revisionOnly = async (db: Kysely<ReadDb>, e: RecordedEvent<SipTrunkEvent>) => {
  await trunk(db, e, {});
};

/** The columns of the configuration fields a change names. */
const configColumns = (c: SipTrunkChanges) => ({
  ...(c.name !== undefined ? { name: c.name } : {}),
  ...(c.transfers !== undefined ? { transfers: c.transfers } : {}),
  ...(c.transferCallerId !== undefined ? { transfer_caller_id: c.transferCallerId } : {}),
  ...(c.uris !== undefined ? { uris: JSON.stringify(c.uris) } : {}),
  // a change names the termination whole; a revert to a trunk that had none gives it none
  ...('termination' in c ? { termination: JSON.stringify(c.termination ?? NO_TERMINATION) } : {}),
});

/**
 * `sip_trunks`: the trunk's configuration and the numbers routed to it; deleted trunks are kept, marked.
 * `number_ids` is a jsonb array edited in SQL: `- 'id'` removes every element equal to the id, `||` appends.
 */
export const sipTrunksProjector = defineProjector<SipTrunkEvent>({
  name: 'sip_trunks_v1',
  // it only writes: a batch's writes and its checkpoint go as one message (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['sip_trunks'],
  on: {
    async SipTrunkCreated(db, e) {
      const c = e.data.config;
      await db
        .insertInto('sip_trunks')
        .values({
          account_id: e.data.accountId,
          trunk_id: e.data.trunkId,
          name: c.name,
          transfers: c.transfers,
          transfer_caller_id: c.transferCallerId,
          uris: JSON.stringify(c.uris),
          termination: JSON.stringify(terminationOf(c)),
          number_ids: JSON.stringify([]),
          provider_ref: e.data.providerRef,
          termination_uri: e.data.terminationUri,
          created_at: e.data.createdAt,
          updated_at: e.data.createdAt,
          deleted_at: null,
          revision: rowRevision(e),
        })
        .onConflict((oc) => oc.column('trunk_id').doNothing())
        .execute();
    },
    SipTrunkUpdated: (db, e) => trunk(db, e, { ...configColumns(e.data.changes), updated_at: e.data.updatedAt }),
    /** the provider refused an update: the fields go back to what they were */
    SipTrunkUpdateReverted: (db, e) => trunk(db, e, { ...configColumns(e.data.changes), updated_at: e.data.revertedAt }),
    // the row exists once the trunk is created; the provider steps' other facts only move its revision
    SipTrunkRequested: revisionOnly,
    SipTrunkFailed: revisionOnly,
    SipTrunkSynced: revisionOnly,
    SipTrunkDeletionRequested: revisionOnly,
    SipTrunkDeletionFailed: revisionOnly,
    SipTrunkDeleted: (db, e) =>
      trunk(db, e, { deleted_at: e.data.deletedAt, number_ids: JSON.stringify([]), updated_at: e.data.deletedAt }),
    async SipTrunkNumberLinked(db, e) {
      const id = e.data.numberId;
      await trunk(db, e, { number_ids: sql`(number_ids - ${id}::text) || jsonb_build_array(${id}::text)` });
    },
    SipTrunkNumberUnlinked: (db, e) => trunk(db, e, { number_ids: sql`number_ids - ${e.data.numberId}::text` }),
  },
});

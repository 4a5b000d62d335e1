import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../application/ports/event-store.port.js';
import { sipTrunkEventTypes, type SipTrunkEvent } from '../domain/sip-trunk/sip-trunk.decider.js';
import { assertNever } from '../domain/shared/types.js';
import { alreadyApplied, type Projector } from './shared/projector.js';
import type { ReadDb } from './shared/read-db.js';

const parse = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

/** `sip_trunks`: the trunk's configuration and the numbers routed to it; deleted trunks are kept, marked. */
export const sipTrunksProjector: Projector = {
  name: 'sip_trunks_v1',
  handles: new Set<string>(sipTrunkEventTypes),
  tables: ['sip_trunks'],
  async apply(db: Kysely<ReadDb>, raw: RecordedEvent) {
    const e = raw as unknown as RecordedEvent<SipTrunkEvent>;
    const revision = String(e.streamRevision);
    const id = e.data.trunkId;
    if (e.type === 'SipTrunkCreated') {
      const c = e.data.config;
      await db.insertInto('sip_trunks').values({
        account_id: e.data.accountId, trunk_id: id, name: c.name, transfers: c.transfers, transfer_caller_id: c.transferCallerId,
        uris: JSON.stringify(c.uris), number_ids: JSON.stringify([]), provider_ref: e.data.providerRef, termination_uri: e.data.terminationUri,
        created_at: e.data.createdAt, updated_at: e.data.createdAt, deleted_at: null, revision,
      }).onConflict((oc) => oc.column('trunk_id').doNothing()).execute();
      return;
    }
    const existing = await db.selectFrom('sip_trunks').select(['revision', 'number_ids']).where('trunk_id', '=', id).executeTakeFirst();
    if (!existing || alreadyApplied(existing.revision, e)) return;
    const row = db.updateTable('sip_trunks').where('trunk_id', '=', id);
    const numberIds = parse<string[]>(existing.number_ids);
    switch (e.type) {
      case 'SipTrunkRequested': case 'SipTrunkFailed': case 'SipTrunkSynced': case 'SipTrunkDeletionRequested': case 'SipTrunkDeletionFailed':
        // the row exists once the trunk is created; these facts only move its revision
        await row.set({ revision }).execute();
        return;
      case 'SipTrunkUpdated':
      case 'SipTrunkUpdateReverted': {
        const c = e.data.changes;
        await row.set({
          ...(c.name !== undefined ? { name: c.name } : {}),
          ...(c.transfers !== undefined ? { transfers: c.transfers } : {}),
          ...(c.transferCallerId !== undefined ? { transfer_caller_id: c.transferCallerId } : {}),
          ...(c.uris !== undefined ? { uris: JSON.stringify(c.uris) } : {}),
          updated_at: e.type === 'SipTrunkUpdated' ? e.data.updatedAt : e.data.revertedAt, revision,
        }).execute();
        return;
      }
      case 'SipTrunkDeleted':
        await row.set({ deleted_at: e.data.deletedAt, number_ids: JSON.stringify([]), updated_at: e.data.deletedAt, revision }).execute();
        return;
      case 'SipTrunkNumberLinked':
        await row.set({ number_ids: JSON.stringify([...numberIds.filter((n) => n !== e.data.numberId), e.data.numberId]), revision }).execute();
        return;
      case 'SipTrunkNumberUnlinked':
        await row.set({ number_ids: JSON.stringify(numberIds.filter((n) => n !== e.data.numberId)), revision }).execute();
        return;
      default:
        assertNever(e);
    }
  },
};

import type { Kysely } from 'kysely';
import type { RecordingStore, StoredRecording } from '../../application/calls/recordings.port.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import '../../projections/calls/tables.js';

/**
 * Recordings in `call_recordings` (docs/calls.md#recordings): one row per call, written once by the recording
 * step. Not a read model: no projector writes it and a rebuild leaves it alone.
 */
export class KyselyRecordingStore implements RecordingStore {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async put(r: StoredRecording): Promise<void> {
    await this.db
      .insertInto('call_recordings')
      .values({ call_id: r.callId, account_id: r.accountId, wav: r.wav, duration_ms: r.durationMs, created_at: r.createdAt })
      .onConflict((oc) => oc.column('call_id').doNothing())
      .execute();
  }

  async get(callId: string): Promise<StoredRecording | null> {
    const row = await this.db.selectFrom('call_recordings').selectAll().where('call_id', '=', callId).executeTakeFirst();
    if (!row) return null;
    return {
      callId: row.call_id,
      accountId: row.account_id,
      // node-postgres answers a Buffer, PGlite a Uint8Array: both are bytes
      wav: row.wav,
      durationMs: row.duration_ms,
      createdAt: new Date(row.created_at).toISOString(),
    };
  }
}

/**
 * Kysely types of the calls read model. The table was created early, by the numbers migration 020 (released
 * migrations are never edited); the calls capability owns it.
 */
export interface CallsTable {
  account_id: string;
  call_id: string;
  agent_id: string | null;
  phone_number_id: string | null;
  phone_number: string | null;
  direction: string;
  from_number: string;
  to_number: string;
  status: string;
  started_at: Date | string;
  ended_at: Date | string | null;
  duration_seconds: number | null;
  disconnection_reason: string | null;
  last_transcript_snippet: string | null;
  recording_enabled: boolean;
  created_at: Date | string;
  updated_at: Date | string;
  revision: string | bigint;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    calls: CallsTable;
  }
}

import type { ColumnType } from 'kysely';

/** A column added by a later migration with a default: optional on insert. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;

/**
 * Kysely types of the calls read model. The table was created early, by the numbers migration 020 (released
 * migrations are never edited), and completed by the calls migration 080; the calls capability owns it.
 */
export interface CallsTable {
  account_id: string;
  call_id: string;
  agent_id: string | null;
  phone_number_id: string | null;
  /** the platform's number on the call (the caller id of an outbound call, the number dialled inbound); null for web calls */
  phone_number: string | null;
  direction: string;
  from_number: string;
  to_number: string;
  /** the public status: `in-progress`, `completed` or `failed` */
  status: string;
  started_at: Date | string;
  ended_at: Date | string | null;
  duration_seconds: number | null;
  disconnection_reason: string | null;
  last_transcript_snippet: string | null;
  /** the call was placed with recording on */
  recording_enabled: boolean;
  created_at: Date | string;
  updated_at: Date | string;
  /** revision of the call's stream the row reflects */
  revision: string | bigint;
  /** `pstn` or `web` (migration 080, like every column below) */
  type: Defaulted<string>;
  mode: Defaulted<string | null>;
  /** where a live call is: `placed`, `ringing`, `answered`; `ended` once over */
  phase: Defaulted<string>;
  voice: Defaulted<string | null>;
  answered_at: Defaulted<Date | string | null>;
  answered_by: Defaulted<string | null>;
  engine_call_id: Defaulted<string | null>;
  disconnection_detail: Defaulted<string | null>;
  summary: Defaulted<string | null>;
  user_sentiment: Defaulted<string | null>;
  call_successful: Defaulted<boolean | null>;
  /** the call ended with audio to store: its recording is (or is being) rendered */
  recording: Defaulted<boolean>;
  /** the recording is stored (`call_recordings`) */
  recording_available: Defaulted<boolean>;
  recording_duration_ms: Defaulted<number | null>;
  transferred_to: Defaulted<string | null>;
  /** the SIP URI an inbound call was bridged to */
  sip_uri: Defaulted<string | null>;
  /** the SIP trunk the call was routed to or came in through (migration 161) */
  sip_trunk_id: Defaulted<string | null>;
  /** jsonb: the URIs tried before it, `[{sipUri, error}]`; written as JSON text */
  sip_failures: Defaulted<unknown>;
  /** jsonb: the prompt's placeholders that the call's variables did not fill; written as JSON text */
  unknown_variables: Defaulted<unknown>;
  /** jsonb: the caller's metadata, as given when the call was placed; written as JSON text */
  metadata: Defaulted<unknown>;
  /** turns recorded so far: the sequence number of the latest one */
  turn_count: Defaulted<number>;
  /** the time of the latest fact about the call */
  last_activity_at: Defaulted<Date | string | null>;
  /** the SIP Call-ID of a call over SIP (migration 091) */
  sip_call_id: Defaulted<string | null>;
  /** jsonb: the line's media each way when the call ended (`LegMedia`); written as JSON text */
  media: Defaulted<unknown>;
  /** the keypad tones the far end pressed, in order (migration 091) */
  digits_received: Defaulted<string | null>;
}

/** One caller or agent turn of a call, in the order the call recorded them (`seq` from 1). */
export interface CallTurnsTable {
  account_id: string;
  call_id: string;
  seq: number;
  turn_id: string;
  /** `user` (the far end) or `agent` */
  role: string;
  /** the caller's transcript, or everything the agent meant to say */
  text: string;
  /** what the far end heard: the caller's transcript, or the agent's speech up to an interruption */
  spoken: string;
  interrupted: boolean;
  /** an agent turn's origin: `greeting`, `webhook`, `model`, `voicemail`, `screening`; null for the caller */
  source: string | null;
  /** the caller's transcription confidence (0-1); null for the agent */
  confidence: number | null;
  reply_to: string | null;
  silent_reason: string | null;
  /** migration 090: the platform's own recognition and synthesis (web calls); null before */
  recognition_ms: Defaulted<number | null>;
  request_ms: number | null;
  first_byte_ms: number | null;
  speech_start_ms: number | null;
  synthesis_ms: Defaulted<number | null>;
  /** jsonb: what an agent turn's reply asked for besides speech, `[{type, value, outcome, detail}]`; written as JSON text */
  actions: unknown;
  started_at: Date | string;
  ended_at: Date | string;
  /** revision of the call's stream that recorded the turn */
  revision: string | bigint;
}

/** The stored audio of a recorded call: written by the recording step, not a projection (never rebuilt). */
export interface CallRecordingsTable {
  call_id: string;
  account_id: string;
  wav: Uint8Array;
  duration_ms: number;
  created_at: Date | string;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    calls: CallsTable;
    call_turns: CallTurnsTable;
    call_recordings: CallRecordingsTable;
  }
}

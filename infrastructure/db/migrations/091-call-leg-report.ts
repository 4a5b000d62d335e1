import { type Kysely, sql } from 'kysely';

/**
 * What the line's engine reports when a call ends (docs/sip.md#observability): the SIP Call-ID and the media each
 * way (packets, bytes, loss, jitter); and the keypad tones the far end pressed. Calls of other engines, and calls
 * before, keep null.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table calls add column sip_call_id text, add column media jsonb, add column digits_received text`.execute(db);
}

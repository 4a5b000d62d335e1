import { type Kysely, sql } from 'kysely';

/**
 * An agent turn's latency also holds the platform's own speech steps (docs/calls.md#latency): recognising the
 * caller's utterance and rendering the reply's first speech, measured on web calls. Turns recorded before keep null.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table call_turns add column recognition_ms integer, add column synthesis_ms integer`.execute(db);
}

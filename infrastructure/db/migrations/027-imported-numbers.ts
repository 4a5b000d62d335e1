import { type Kysely, sql } from 'kysely';

/** Imported numbers (docs/numbers.md#imported-numbers) name the carrier they arrive from. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table phone_numbers add column carrier_id text`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * Inbound texts and calls find their number by its E.164 (`activeByPhoneNumber`): an index on the active
 * numbers' E.164, so that routing one does not scan every number ever held. `active_order` is the checkpoint of
 * the event that made the number active (sortable as text), which decides between two active holders of one
 * E.164 should the read model ever show them (docs/numbers.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table phone_numbers add column active_order text`.execute(db);
  await sql`create index phone_numbers_active_e164_idx on phone_numbers (phone_number, active_order) where status = 'active'`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * The termination side of SIP trunks (docs/sip.md#calls-from-your-pbx): the credentials (passwords sealed) and
 * source addresses a customer's PBX sends calls out with. Trunks recorded before it have none. A call names the
 * trunk it was routed to or came from (`sip_trunk_id`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sip_trunks add column termination jsonb not null default '{"credentials":[],"addresses":[]}'`.execute(db);
  await sql`alter table calls add column sip_trunk_id text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table calls drop column if exists sip_trunk_id`.execute(db);
  await sql`alter table sip_trunks drop column if exists termination`.execute(db);
}

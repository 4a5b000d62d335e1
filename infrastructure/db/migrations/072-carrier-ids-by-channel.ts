import { type Kysely, sql } from 'kysely';

/**
 * A provider's id names a message only within its channel (docs/messaging.md#receiving): the receipts of every
 * channel find their message by the channel and the provider's id, so two providers that happen to use one id never
 * meet. The rows written before get their message's channel.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table message_carrier_ids add column channel text`.execute(db);
  await sql`update message_carrier_ids c set channel = m.channel from messages m where m.message_id = c.message_id`.execute(db);
  // a row whose message row is missing (none should be) keeps the channel of texts, as before channels existed
  await sql`update message_carrier_ids set channel = 'sms' where channel is null`.execute(db);
  await sql`alter table message_carrier_ids alter column channel set not null`.execute(db);
  await sql`alter table message_carrier_ids drop constraint message_carrier_ids_pkey`.execute(db);
  await sql`alter table message_carrier_ids add primary key (channel, carrier_message_id)`.execute(db);
}

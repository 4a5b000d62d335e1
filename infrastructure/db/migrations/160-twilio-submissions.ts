import { type Kysely, sql } from 'kysely';

/**
 * The Twilio carrier's record of the texts it handed to Twilio (docs/carriers.md#texts): Twilio takes no idempotency
 * key for a message, so the carrier keeps, per message key, Twilio's message SID once Twilio answered, or Twilio's
 * refusal. A key tried whose answer never came is looked for at Twilio before it is sent again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table twilio_submissions (
      idempotency_key text primary key,
      account_id text not null,
      from_number text not null,
      to_number text not null,
      message_sid text unique,
      refused_code text,
      refused_reason text,
      first_tried_at timestamptz not null,
      answered_at timestamptz
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists twilio_submissions`.execute(db);
}

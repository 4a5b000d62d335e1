import { type Kysely, sql } from 'kysely';

/**
 * The contacts read model (docs/contacts.md). Numbers are not unique here: the claim streams keep them unique
 * (docs/contacts.md#one-contact-per-number), and a projector must never stop on a row the log already holds.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table contacts (
      account_id text not null,
      contact_id text primary key,
      phone_number text not null,
      name text not null,
      email text,
      notes text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz,
      revision bigint not null
    )`.execute(db);
  await sql`create index contacts_account_idx on contacts (account_id, created_at, contact_id) where deleted_at is null`.execute(db);
  await sql`create index contacts_phone_idx on contacts (account_id, phone_number) where deleted_at is null`.execute(db);
}

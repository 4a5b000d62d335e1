import { type Kysely, sql } from 'kysely';

/**
 * The rich-messaging channel's read models (docs/rich-messaging.md): the numbers the provider serves, the latest
 * capability check of each number an account asked about, contact cards, and shared locations. Also `rich_media`,
 * the images fetched once (avatars, chat backgrounds) and kept to be served to the provider: not a read model (no
 * event holds the bytes), so a rebuild leaves it alone.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table rich_lines (
      number_id text primary key,
      account_id text not null,
      phone_number text not null,
      status text not null,
      activated_at timestamptz not null,
      revision bigint not null
    )`.execute(db);
  await sql`create index rich_lines_account_idx on rich_lines (account_id, activated_at) where status = 'active'`.execute(db);
  await sql`
    create table rich_capabilities (
      account_id text not null,
      phone_number text not null,
      imessage boolean not null,
      sms boolean not null,
      checked_at timestamptz not null,
      check_id text not null,
      primary key (account_id, phone_number)
    )`.execute(db);
  await sql`
    create table rich_contact_cards (
      number_id text primary key,
      account_id text not null,
      status text not null,
      first_name text,
      last_name text,
      display_name text,
      has_avatar boolean not null,
      version integer not null,
      revision bigint not null
    )`.execute(db);
  await sql`
    create table rich_locations (
      account_id text not null,
      phone_number text not null,
      number_id text not null,
      status text not null,
      latitude double precision,
      longitude double precision,
      last_updated bigint not null,
      reported_at timestamptz not null,
      primary key (account_id, phone_number)
    )`.execute(db);
  await sql`
    create table rich_media (
      media_id text primary key,
      account_id text not null,
      content_type text not null,
      sha256 text not null,
      bytes integer not null,
      data bytea not null,
      created_at timestamptz not null default now()
    )`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/** The carriers the operator configures through the API (docs/sip.md#carriers): settings as recorded, passwords sealed. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table sip_carriers (
      carrier_id text primary key,
      name text not null,
      settings jsonb not null,
      status text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      revision bigint not null
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists sip_carriers`.execute(db);
}

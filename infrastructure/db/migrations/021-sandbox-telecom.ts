import { type Kysely, sql } from 'kysely';

/**
 * The sandbox carrier's and SIP provider's own state, kept in the database so that it survives restarts and
 * is shared by every process (an API process injects a fault that the worker process's carrier calls meet).
 * These tables belong to the simulated upstreams, not to the platform's read models.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table sandbox_carrier_numbers (
      phone_number text primary key,
      area_code text not null,
      country text not null,
      status text not null,
      purchase_key text,
      account_id text,
      carrier_ref text not null,
      purchased_at timestamptz,
      messaging_url text,
      voice_url text,
      routed_at timestamptz,
      released_at timestamptz,
      available_at timestamptz
    )`.execute(db);
  await sql`create unique index sandbox_carrier_numbers_key_idx on sandbox_carrier_numbers (purchase_key) where status = 'purchased'`.execute(
    db,
  );
  await sql`create index sandbox_carrier_numbers_area_idx on sandbox_carrier_numbers (area_code)`.execute(db);
  await sql`
    create table sandbox_faults (
      fault_id text primary key,
      operation text not null,
      error_code text,
      delay_ms integer not null,
      after_effect boolean not null,
      remaining integer not null,
      created_at timestamptz not null
    )`.execute(db);
  await sql`create index sandbox_faults_operation_idx on sandbox_faults (operation, created_at)`.execute(db);
  await sql`
    create table sandbox_sip_trunks (
      provider_ref text primary key,
      trunk_id text not null unique,
      account_id text not null,
      config jsonb not null,
      termination_uri text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    )`.execute(db);
}

import { type Kysely, sql } from 'kysely';

/**
 * The call-recording add-on read model (docs/recording-addon.md): one row per account that ever enabled it, and
 * every period paid for (whether calls placed at a time were recorded).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table recording_addons (
      account_id text primary key,
      status text not null,
      renews boolean not null,
      periods_paid integer not null,
      current_period_start timestamptz not null,
      current_period_end timestamptz not null,
      end_reason text,
      updated_at timestamptz not null,
      revision bigint not null
    )`.execute(db);
  // the renewal job's queue: add-ons whose period is running or due
  await sql`create index recording_addons_due_idx on recording_addons (current_period_end) where status = 'subscribed'`.execute(db);
  await sql`
    create table recording_addon_periods (
      account_id text not null,
      period integer not null,
      starts_at timestamptz not null,
      ends_at timestamptz not null,
      charge_id text not null,
      amount_micros bigint not null,
      primary key (account_id, period)
    )`.execute(db);
}

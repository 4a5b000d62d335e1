import { type Kysely, sql } from 'kysely';

/** Number slots on the account row, and the ledger: one row per credit or charge, in micro-dollars. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table accounts add column numbers_used integer not null default 0`.execute(db);
  await sql`
    create table account_ledger (
      entry_id text primary key,
      account_id text not null,
      seq bigint not null,
      kind text not null,
      amount_micros bigint not null,
      balance_micros bigint not null,
      description text not null,
      reference text,
      at timestamptz not null
    )`.execute(db);
  await sql`create index account_ledger_account_idx on account_ledger (account_id, seq)`.execute(db);
}

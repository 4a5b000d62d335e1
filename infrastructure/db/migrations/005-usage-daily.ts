import { type Kysely, sql } from 'kysely';

/** Analytics: daily counters per account and metric (messages, calls, webhook deliveries…), fed by projectors. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table usage_daily (
      account_id text not null,
      day date not null,
      metric text not null,
      count bigint not null default 0,
      primary key (account_id, metric, day)
    )`.execute(db);
}

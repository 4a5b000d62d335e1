import { type Kysely, sql } from 'kysely';

/**
 * Opt-out rows are kept when lifted (`opted_out` false) and carry the revision of the recipient's consent stream
 * they reflect, so that a replayed older event cannot bring back a lifted opt-out (docs/messaging.md#opt-out).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table opt_outs add column opted_out boolean not null default true, add column revision bigint not null default -1`.execute(
    db,
  );
}

import { type Kysely, sql } from 'kysely';

/**
 * An agent's numbers are listed in the order their attaches were recorded: the order of the global log as
 * subscribers read it (the event checkpoint), which with concurrent PostgreSQL writers is not always the order
 * of `global_position`. `attached_order` holds the checkpoint in a form that sorts as text.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table phone_numbers add column attached_order text`.execute(db);
  await sql`update phone_numbers set attached_order = lpad(attached_position::text, 20, '0') where attached_position is not null`.execute(
    db,
  );
  await sql`create index phone_numbers_agent_order_idx on phone_numbers (account_id, agent_id, attached_order)`.execute(db);
}

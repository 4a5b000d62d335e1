import { type Kysely, sql } from 'kysely';

/**
 * One checkpoint table for projectors and reactors: `projection_checkpoints` gains a `kind` column, the
 * reactors' rows move into it, and `reactor_checkpoints` becomes a read-only view of them, so anything that
 * still reads the old table keeps working. A name shared by a projector and a reactor fails this migration
 * (the primary key) rather than losing a checkpoint.
 *
 * Numbered after 022, which created `reactor_checkpoints`, although checkpoints are platform: on a new
 * database a platform-range number (001-009) would run before 022, so the table would not exist yet to be
 * replaced, and 022 would create it afterwards in place of the view.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table projection_checkpoints add column kind text not null default 'projector'`.execute(db);
  await sql`
    insert into projection_checkpoints (name, kind, checkpoint, updated_at)
    select name, 'reactor', checkpoint, updated_at from reactor_checkpoints`.execute(db);
  await sql`drop table reactor_checkpoints`.execute(db);
  await sql`create view reactor_checkpoints as select name, checkpoint, updated_at from projection_checkpoints where kind = 'reactor'`.execute(
    db,
  );
}

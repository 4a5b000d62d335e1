import { type ExpressionBuilder, type Kysely, sql, type UpdateObject, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import { rowRevision } from './projector.js';
import type { ReadDb } from './read-db.js';

/**
 * The one guarded row update of every projector (docs/architecture.md#read-models-and-projectors): narrows an update of
 * a table to the rows whose `key` columns hold these values while they reflect a revision of the event's stream older
 * than the event's. A replay, or an event older than what a row shows, matches nothing and changes nothing. The
 * update sets the row's new revision with its values (`revision: rowRevision(e)`).
 */
export function guarded<DB, TB extends keyof DB>(
  update: UpdateQueryBuilder<DB, TB, TB, UpdateResult>,
  key: Readonly<Partial<Record<keyof DB[TB] & string, string>>>,
  /** the event, or the revision its row would show (a statement compiled once passes its slot) */
  e: RecordedEvent | string,
  /** the row's revision column, when it is not `revision` */
  revision?: keyof DB[TB] & string,
): UpdateQueryBuilder<DB, TB, TB, UpdateResult> {
  const matches = Object.entries(key).map(([column, value]) => sql<boolean>`${sql.ref(column)} = ${value}`);
  const at = typeof e === 'string' ? e : rowRevision(e);
  return update.where(sql<boolean>`${sql.join([...matches, sql`${sql.ref(revision ?? 'revision')} < ${at}`], sql` and `)}`);
}

/**
 * The rows of one table that one kind of stream keeps, updated the guarded way: `row(db, e, values)` sets `values`,
 * and the event's revision, on the row `key(e)` names while it reflects an older revision (`guarded`);
 * `row.where(db, e)` is the guarded update itself, for a handler that sets more or reads what matched.
 */
export function guardedRow<DB, TB extends keyof DB & string, E extends RecordedEvent>(
  table: (db: Kysely<ReadDb>) => UpdateQueryBuilder<DB, TB, TB, UpdateResult>,
  key: (e: E) => Readonly<Partial<Record<keyof DB[TB] & string, string>>>,
  /** the row's revision column, when it is not `revision` */
  revision?: keyof DB[TB] & string,
) {
  const where = (db: Kysely<ReadDb>, e: E) => guarded(table(db), key(e), e, revision);
  const set = async (
    db: Kysely<ReadDb>,
    e: E,
    values: UpdateObject<DB, TB, TB> | ((eb: ExpressionBuilder<DB, TB>) => UpdateObject<DB, TB, TB>),
  ): Promise<void> => {
    await where(db, e)
      .set(values)
      .set(sql.ref(revision ?? 'revision'), rowRevision(e))
      .execute();
  };
  return Object.assign(set, { where });
}

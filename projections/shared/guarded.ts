import { sql, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import { rowRevision } from './projector.js';

/**
 * The one guarded row update of every projector (docs/architecture.md#read-models-and-projectors): narrows an update of
 * a table to the rows whose `key` columns hold these values while they reflect a revision of the event's stream older
 * than the event's. A replay, or an event older than what a row shows, matches nothing and changes nothing. The
 * update sets the row's new revision with its values (`revision: rowRevision(e)`).
 */
export function guarded<DB, TB extends keyof DB>(
  update: UpdateQueryBuilder<DB, TB, TB, UpdateResult>,
  key: Readonly<Partial<Record<keyof DB[TB] & string, string>>>,
  e: RecordedEvent,
  /** the row's revision column, when it is not `revision` */
  revision?: keyof DB[TB] & string,
): UpdateQueryBuilder<DB, TB, TB, UpdateResult> {
  const matches = Object.entries(key).map(([column, value]) => sql<boolean>`${sql.ref(column)} = ${value}`);
  return update.where(sql<boolean>`${sql.join([...matches, sql`${sql.ref(revision ?? 'revision')} < ${rowRevision(e)}`], sql` and `)}`);
}

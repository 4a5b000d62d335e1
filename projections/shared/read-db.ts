/** Kysely types of the read-model tables (the tables themselves are created by infrastructure migrations). */
import { type ColumnType, type RawBuilder, sql } from 'kysely';

/**
 * A constant that a partial index is defined by (`where status = 'active'`), written into the statement as a
 * literal: embedded statements are prepared (docs/event-store.md#prepared-statements), and a prepared statement's
 * generic plan cannot use a partial index whose condition compares with a parameter, so PostgreSQL planned such a
 * look-up again on every run.
 */
export const indexed = <T extends string>(value: T): RawBuilder<T> => sql.lit(value);

/** The checkpoints of projectors and reactors alike (`kind`: projector | reactor; reactors' since migration 024). */
export interface ProjectionCheckpointsTable {
  name: string;
  kind: ColumnType<string, string | undefined, string>;
  checkpoint: string;
  updated_at: Date | string;
}
/** Which process drives a projector or reactor now, until when (see projections/shared/checkpoint-runner.ts). */
export interface WorkerLeasesTable {
  name: string;
  holder: string;
  expires_at: Date | string;
}
/**
 * Every read-model table. Each capability adds its own tables from its own folder by declaration merging
 * (`projections/<capability>/tables.ts`), so this file names only the projection engine's own.
 */
export interface ReadDb {
  projection_checkpoints: ProjectionCheckpointsTable;
  worker_leases: WorkerLeasesTable;
}

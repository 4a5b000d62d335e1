import { type Kysely, sql } from 'kysely';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { freshDatabase } from './stores.js';

/**
 * A migrated database (PGlite, or DATABASE_URL) with scratch schemas that copy read-model tables, for tests that
 * apply the same log two ways and compare the tables (a projector's batches against its one-event handlers).
 */
export async function scratchSchemas(names: readonly string[], tables: readonly string[]) {
  // embedded, from the migrated image this test process made once (test/support/http.ts), not migrated afresh
  const h = await freshDatabase();
  const db = h.db as unknown as Kysely<ReadDb>;
  return {
    db,
    /** every scratch schema dropped and created again, with empty copies of the tables */
    async fresh(): Promise<void> {
      for (const s of names) {
        await sql.raw(`drop schema if exists ${s} cascade`).execute(db);
        await sql.raw(`create schema ${s}`).execute(db);
        for (const t of tables) await sql.raw(`create table ${s}.${t} (like public.${t} including all)`).execute(db);
      }
    },
    /** the tables of one schema, rows ordered by their first two columns, as JSON values */
    async dump(schema: string): Promise<Record<string, unknown[]>> {
      const out: Record<string, unknown[]> = {};
      for (const t of tables)
        out[t] = (await sql.raw(`select * from ${schema}.${t} order by 1, 2`).execute(db)).rows.map((r) => JSON.parse(JSON.stringify(r)));
      return out;
    },
    async close(): Promise<void> {
      for (const s of names) await sql.raw(`drop schema if exists ${s} cascade`).execute(db);
      await h.close();
    },
  };
}

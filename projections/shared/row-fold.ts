import type { Kysely } from 'kysely';
import type { ReadDb } from './read-db.js';

/** Rows go to PostgreSQL in chunks, well inside its 65,535 parameters per statement. */
const CHUNK = 500;
export const chunks = <T>(xs: readonly T[]): T[][] =>
  Array.from({ length: Math.ceil(xs.length / CHUNK) }, (_, i) => xs.slice(i * CHUNK, (i + 1) * CHUNK));

type Table = keyof ReadDb & string;
type Row = Record<string, unknown>;
/** Table and column names are the fold's parameters, checked by its typed users: any table, any columns. */
const loose = (db: Kysely<ReadDb>) => db.withTables<Record<string, Row>>();
/** a table's name as the loose view takes it */
const named = (table: Table): string => table;

/**
 * A batch's rows of one table, folded in memory (docs/analytics.md#batches): the rows the batch touches are read
 * once, every event of the batch is applied to them in log order with the same rules as the projector's
 * one-statement handlers (create once; move only while the row reflects an older revision of its stream), and the
 * rows that changed are written back in a few statements.
 */
export class RowFold<R extends { revision: string | bigint }> {
  private readonly stored = new Map<string, R>();
  private readonly changed = new Map<string, R>();

  constructor(
    private readonly table: Table,
    private readonly key: keyof R & string,
    /** the columns an event may move after the row was created */
    private readonly moving: readonly (keyof R & string)[],
    private readonly o: {
      /** the column holding the stream revision a move is guarded by, when it is not `revision` */
      readonly guard?: keyof R & string;
      /** a stored row as the fold keeps it (e.g. jsonb columns as JSON text, so that they are written back as they were) */
      readonly decode?: (row: R) => R;
    } = {},
  ) {}

  private get guard(): keyof R & string {
    return this.o.guard ?? 'revision';
  }

  /** the key as the loose view names a column */
  private get column(): string {
    return this.key;
  }

  async load(db: Kysely<ReadDb>, ids: Iterable<string>): Promise<void> {
    for (const part of chunks([...new Set(ids)]))
      for (const r of await loose(db)
        .selectFrom(named(this.table))
        .selectAll()
        .where(this.column, 'in', part)
        // the rows of this fold's table are R: its typed users name the table and R together
        .$castTo<R>()
        .execute())
        this.stored.set(String(r[this.key]), this.o.decode ? this.o.decode(r) : r);
  }

  get(id: string): R | undefined {
    return this.changed.get(id) ?? this.stored.get(id);
  }

  /** Creates the row unless it exists (an insert that does nothing on conflict). */
  create(row: R): void {
    const id = String(row[this.key]);
    if (!this.get(id)) this.changed.set(id, row);
  }

  /** Moves the row when it exists and reflects an older revision than `revision` (a guarded update). */
  move(id: string, revision: string, patch: Partial<R>): void {
    const current = this.get(id);
    if (!current || BigInt(current[this.guard] as string | bigint) >= BigInt(revision)) return;
    this.changed.set(id, { ...current, ...patch, [this.guard]: revision });
  }

  async write(db: Kysely<ReadDb>): Promise<void> {
    for (const part of chunks([...this.changed.values()]))
      await loose(db)
        .insertInto(named(this.table))
        .values(part)
        .onConflict((oc) =>
          oc
            .column(this.key)
            .doUpdateSet((eb) =>
              Object.fromEntries([...new Set([...this.moving, 'revision', this.guard])].map((c) => [c, eb.ref(`excluded.${c}`)])),
            ),
        )
        .execute();
  }
}

/** Insert-only rows (an attempt, a turn, a charge): written in chunks, a row that exists stays as it is. */
export async function insertNew(db: Kysely<ReadDb>, table: Table, conflict: readonly string[], rows: readonly Row[]): Promise<void> {
  for (const part of chunks(rows))
    await loose(db)
      .insertInto(named(table))
      .values(part)
      .onConflict((oc) => oc.columns(conflict as string[]).doNothing())
      .execute();
}

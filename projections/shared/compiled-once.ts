import { type Compilable, type CompiledQuery, createQueryId, type Kysely } from 'kysely';

/** What a slot holds while the query is built: a string no caller's value looks like. */
const SLOT = '\u0000compiled-once\u0000';

/** A statement whose text tells views apart: compiled with the schema a view names (`withSchema`), and any plugin's renaming. */
const PROBE = 'compiled_once_probe';
/** the kinds of view a statement keeps compiled at most */
const MAX_KINDS = 16;

/** a query's values; a list is one parameter (an array, for `= any(…)` or `unnest(…)`), so the text stays the same */
type Values = Record<string, string | number | boolean | null | readonly string[]>;

/**
 * A query built and compiled once, then run with new values (docs/event-store.md#compiled-once). Building a
 * statement with Kysely (its nodes, frozen at each step) and compiling it to SQL cost the process's thread more than
 * sending it, on the hottest paths; this keeps the compiled text and puts each run's values where the slots were.
 *
 * `build` is called once, with `v` whose every property is a slot. It must pass each slot it reads as a value of the
 * query (a parameter) and give the same query whatever the values: it may not compare them, spread one into an `in`
 * list or write one as a literal. The first compile refuses a slot that was read and did not become a parameter, or
 * that ended up in the text.
 */
export class CompiledOnce<DB, V extends Values, O> {
  private compiled: Compiled | null = null;
  /** compiled for the views of the database given to `compileOn`, by what their probe compiles to */
  private readonly byView = new Map<string, Compiled>();

  constructor(
    /** the database `compile` and `execute` run on; null for a statement only ever run on views (`compileOn`) */
    private readonly db: Kysely<DB> | null,
    private readonly build: (db: Kysely<DB>, v: V) => Compilable<O>,
  ) {}

  /** The statement with these values: what Kysely compiles from `build(db, values)`. */
  compile(values: V): CompiledQuery<O> {
    if (!this.db) throw new Error('a compiled-once query made for views runs only on them (compileOn)');
    this.compiled ??= this.compileSlots(this.db);
    return this.filled(this.compiled, values);
  }

  /**
   * The statement for another view of the database (a projector's batch is given a view of its own; a rebuild's
   * names its schema): what Kysely compiles from `build(db, values)`. Compiled once per kind of view: views whose
   * probe statement compiles to the same text (the same schema) share it.
   */
  compileOn(db: Kysely<DB>, values: V): CompiledQuery<O> {
    const kind = viewKind(db);
    let c = this.byView.get(kind);
    if (!c) {
      c = this.compileSlots(db);
      // a few kinds in a process's life (the live tables, a rebuild's or a replay's schema now and then)
      if (this.byView.size >= MAX_KINDS) this.byView.clear();
      this.byView.set(kind, c);
    }
    return this.filled(c, values);
  }

  private filled(c: Compiled, values: V): CompiledQuery<O> {
    const parameters = c.slots.map((slot, i) => (slot === null ? c.fixed[i] : values[slot]));
    return { sql: c.sql, query: c.query, queryId: createQueryId(), parameters };
  }

  async execute(values: V): Promise<O[]> {
    if (!this.db) throw new Error('a compiled-once query made for views runs only on them (compileOn)');
    return (await this.db.executeQuery(this.compile(values))).rows;
  }

  async executeTakeFirst(values: V): Promise<O | undefined> {
    return (await this.execute(values))[0];
  }

  private compileSlots(db: Kysely<DB>): Compiled {
    const read = new Set<string>();
    const v = new Proxy({} as V, {
      get: (_, k) => {
        if (typeof k !== 'string') return undefined;
        read.add(k);
        return `${SLOT}${k}`;
      },
    });
    const q = this.build(db, v).compile();
    if (q.sql.includes(SLOT)) throw new Error('a compiled-once query wrote a slot into its text instead of passing it as a value');
    const slots = q.parameters.map((p) => (typeof p === 'string' && p.startsWith(SLOT) ? p.slice(SLOT.length) : null));
    for (const k of read) if (!slots.includes(k)) throw new Error(`a compiled-once query read slot ${k} without passing it as a value`);
    return { sql: q.sql, query: q.query, slots, fixed: q.parameters };
  }
}

type Compiled = Readonly<{ sql: string; query: CompiledQuery['query']; slots: (string | null)[]; fixed: readonly unknown[] }>;

/** What a view of the database compiles the probe statement to, kept per view: a batch's view compiles it once, however many statements it runs. */
const kinds = new WeakMap<object, string>();
function viewKind<DB>(db: Kysely<DB>): string {
  let kind = kinds.get(db);
  if (kind === undefined) {
    kind = (db as unknown as Kysely<Record<string, { x: unknown }>>).selectFrom(PROBE).select('x').compile().sql;
    kinds.set(db, kind);
  }
  return kind;
}

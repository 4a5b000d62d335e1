import { type Compilable, type CompiledQuery, createQueryId, type Kysely } from 'kysely';

/** What a slot holds while the query is built: a string no caller's value looks like. */
const SLOT = '\u0000compiled-once\u0000';

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
  private compiled: Readonly<{ sql: string; query: CompiledQuery['query']; slots: (string | null)[]; fixed: readonly unknown[] }> | null =
    null;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly build: (db: Kysely<DB>, v: V) => Compilable<O>,
  ) {}

  /** The statement with these values: what Kysely compiles from `build(db, values)`. */
  compile(values: V): CompiledQuery<O> {
    const c = this.compiled ?? this.compileSlots();
    const parameters = c.slots.map((slot, i) => (slot === null ? c.fixed[i] : values[slot]));
    return { sql: c.sql, query: c.query, queryId: createQueryId(), parameters };
  }

  async execute(values: V): Promise<O[]> {
    return (await this.db.executeQuery(this.compile(values))).rows;
  }

  async executeTakeFirst(values: V): Promise<O | undefined> {
    return (await this.execute(values))[0];
  }

  private compileSlots() {
    const read = new Set<string>();
    const v = new Proxy({} as V, {
      get: (_, k) => {
        if (typeof k !== 'string') return undefined;
        read.add(k);
        return `${SLOT}${k}`;
      },
    });
    const q = this.build(this.db, v).compile();
    if (q.sql.includes(SLOT)) throw new Error('a compiled-once query wrote a slot into its text instead of passing it as a value');
    const slots = q.parameters.map((p) => (typeof p === 'string' && p.startsWith(SLOT) ? p.slice(SLOT.length) : null));
    for (const k of read) if (!slots.includes(k)) throw new Error(`a compiled-once query read slot ${k} without passing it as a value`);
    this.compiled = { sql: q.sql, query: q.query, slots, fixed: q.parameters };
    return this.compiled;
  }
}

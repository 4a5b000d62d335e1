import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { serialize } from 'pg-protocol';
import { OneMessage } from './one-message.js';
import { preparable, stalePrepared } from './prepared.js';
import { SYNC } from './wire.js';

/**
 * Prepared statements on a PostgreSQL server (docs/event-store.md#prepared-statements): node-postgres sends a statement
 * unnamed unless it is given a name, and the server then parses, analyses and plans its text at every run. Here each
 * pooled connection gives a statement it may prepare, once it runs a second time there, a name of its own, and
 * node-postgres parses the text under it once on that connection and after that only binds it. A connection keeps the
 * last `KEPT` texts and closes the oldest as it goes, as the embedded session does.
 */

/** statements a connection keeps prepared */
const KEPT = 500;
/** texts seen once a connection remembers, all forgotten when there are more */
const SEEN_MAX = 1_000;

/** what node-postgres knows of the statements its connection has parsed under a name (name → text) */
type Parsed = { connection: { parsedStatements: Record<string, string> } };

/** The statements one pooled connection has prepared. */
export class SessionStatements {
  /** statement text → the name it is prepared under on this connection, least recently used first */
  private readonly kept = new Map<string, string>();
  /** texts run once on the connection, unnamed */
  private readonly seen = new Set<string>();
  /** names let go of, to close with the connection's next message outside a transaction */
  private closing: string[] = [];
  /** whether a transaction made statement by statement is open on the connection */
  inTransaction = false;

  constructor(
    private readonly client: pg.PoolClient,
    /** null: nothing is prepared on this connection */
    private readonly nextName: (() => string) | null,
  ) {}

  /** the name `sql` is bound by, if the connection has it prepared */
  prepared(sql: string): string | undefined {
    const name = this.kept.get(sql);
    if (name === undefined) return undefined;
    this.kept.delete(sql);
    this.kept.set(sql, name);
    return name;
  }

  /**
   * A new name to parse `sql` under, if it may be prepared and runs a second time on this connection. A text seen once
   * runs unnamed: many texts run once or twice in all (a batch's `in (…)` list or rows of one length), and preparing
   * them would only push the statements that run all the time out of the ones kept.
   */
  fresh(sql: string, params: readonly unknown[]): string | undefined {
    if (this.nextName === null || !preparable(sql, params)) return undefined;
    if (this.seen.delete(sql)) return this.nextName();
    if (this.seen.size >= SEEN_MAX) this.seen.clear();
    this.seen.add(sql);
    return undefined;
  }

  /** `sql` was parsed under `name` on this connection: bound by it from now on */
  keep(sql: string, name: string): void {
    // two statements of one text at once (in a transaction) may both have parsed it: the earlier name is let go of
    const before = this.kept.get(sql);
    if (before !== undefined && before !== name) this.let(sql, before);
    this.parsed()[name] = sql;
    this.kept.set(sql, name);
    for (const [oldest, n] of this.kept) {
      if (this.kept.size <= KEPT) break;
      this.let(oldest, n);
    }
  }

  /** the connection may or may not have parsed `name` (its message failed): closed with the next message */
  unsure(name: string): void {
    this.closing.push(name);
  }

  /** `sql`'s prepared statement went stale (its table changed shape): let go of, and parsed afresh when it runs next */
  forget(sql: string): void {
    const name = this.kept.get(sql);
    if (name === undefined) return;
    this.let(sql, name);
    this.seen.add(sql); // it ran before: prepared again the next time it runs
  }

  /** whether names were let go of and wait to be closed */
  get closes(): boolean {
    return this.closing.length > 0;
  }

  /** the `Close` messages of the names let go of, taken: they go first in the connection's next message */
  takeCloses(): Buffer[] {
    const closes = this.closing.map((name) => serialize.close({ type: 'S', name }));
    this.closing = [];
    return closes;
  }

  /** whether node-postgres parsed `name` on this connection (a statement it ran itself) */
  parsedByDriver(name: string, sql: string): boolean {
    return this.parsed()[name] === sql;
  }

  private let(sql: string, name: string): void {
    this.kept.delete(sql);
    delete this.parsed()[name];
    this.closing.push(name);
  }

  private parsed(): Record<string, string> {
    return (this.client as unknown as Parsed).connection.parsedStatements;
  }
}

const OPENS = /^\s*(begin|start\s+transaction)\b/i;
const ENDS = /^\s*(commit|rollback|end|abort)\b/i;
/** statements that open or end a transaction are short, and have no parameters */
const MAYBE_TRANSACTION = 64;

/** The prepared statements of each of a pool's connections, and the names they are given (unique in the pool). */
export class PoolStatements {
  private readonly sessions = new WeakMap<pg.PoolClient, SessionStatements>();
  private named = 0;

  /** `enabled` false: every statement runs unnamed (behind a connection pooler that keeps no prepared statements) */
  constructor(private readonly enabled = true) {}

  of(client: pg.PoolClient): SessionStatements {
    let s = this.sessions.get(client);
    if (!s) {
      s = new SessionStatements(client, this.enabled ? () => `avs_${++this.named}` : null);
      this.sessions.set(client, s);
    }
    return s;
  }
}

/**
 * The pool as Kysely's `PostgresDialect` takes it, whose connections prepare the statements they run. A statement
 * whose prepared statement went stale runs again, parsed afresh, when outside a transaction (nothing of it was done);
 * inside one it fails that transaction once, as on PGlite.
 */
export function preparingPool(pool: pg.Pool, statements: PoolStatements): PostgresPool {
  // Kysely keeps one connection object per client it is handed: the same client gets the same wrapper
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    const session = statements.of(client);
    const run = async (sql: string, params: readonly unknown[], retried: boolean): Promise<pg.QueryResult> => {
      if (params.length === 0 && sql.length <= MAYBE_TRANSACTION) {
        if (OPENS.test(sql)) session.inTransaction = true;
        else if (ENDS.test(sql)) session.inTransaction = false;
      }
      if (session.closes && !session.inTransaction) {
        const closes = session.takeCloses();
        // only when the connection let go of statements (more than it keeps, a stale one, a failed batch's): rare
        // a name already gone is not an error; anything else ends with the connection, whose next query says so
        if (closes.length > 0)
          await new Promise<void>((done) => client.query(new OneMessage(Buffer.concat([...closes, SYNC]), () => done())));
      }
      const prepared = session.prepared(sql);
      const name = prepared ?? session.fresh(sql, params);
      if (name === undefined) return client.query(sql, params as unknown[]);
      try {
        return await client.query({ text: sql, values: params as unknown[], name });
      } catch (err) {
        if (prepared !== undefined && stalePrepared(err)) {
          session.forget(sql);
          if (!session.inTransaction && !retried) return run(sql, params, true);
        }
        throw err;
      } finally {
        // parsed, whatever its execution did: kept; a parse that failed left nothing to keep
        if (prepared === undefined && session.parsedByDriver(name, sql)) session.keep(sql, name);
      }
    };
    return {
      query: ((sqlOrCursor: string | pg.Submittable, params?: readonly unknown[]) =>
        typeof sqlOrCursor === 'string'
          ? run(sqlOrCursor, params ?? [], false)
          : client.query(sqlOrCursor)) as unknown as PostgresPoolClient['query'],
      release: () => client.release(),
    };
  };
  return {
    connect: async () => {
      const client = await pool.connect();
      let w = wrappers.get(client);
      if (!w) {
        w = wrap(client);
        wrappers.set(client, w);
      }
      return w;
    },
    end: () => pool.end(),
  };
}

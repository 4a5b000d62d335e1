import { type PGlite, parse, protocol } from '@electric-sql/pglite';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import pgUtils from 'pg/lib/utils.js';

export type StatementResult = { rows: Record<string, unknown>[]; affectedRows?: number };

/** Where statements run: PGlite in this thread, or on its own thread (docs/event-store.md#pglite-on-its-own-thread). */
export interface PgliteRunner {
  run(sql: string, params: readonly unknown[]): Promise<StatementResult>;
  /** the data directory as a tarball (a test's migrated template) */
  dump(): Promise<Blob | File>;
  close(): Promise<void>;
}

const joined = (parts: readonly Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/**
 * Runs one statement on PGlite in one pass through its wire protocol (docs/event-store.md#pglite-on-its-own-thread):
 * with parameters, parse, bind, describe, execute and sync sent together, the parameters as node-postgres sends
 * them to a server (text, their types left to the server; the same values give the same statement on both); without
 * parameters, a simple query. PGlite's own `query` makes six passes for the first and asks for the parameters'
 * types first. The rows come back through PGlite's own parsers, so they are what its `query` would answer.
 */
export function runStatement(client: PGlite, sql: string, params: readonly unknown[]): Promise<StatementResult> {
  const { serialize } = protocol;
  const message =
    params.length === 0
      ? serialize.query(sql)
      : joined([
          serialize.parse({ text: sql, types: [] }),
          serialize.bind({ values: params.map((v) => pgUtils.prepareValue(v)) as never }),
          serialize.describe({ type: 'P' }),
          serialize.execute({}),
          serialize.sync(),
        ]);
  return client.runExclusive(async () => {
    const { messages } = await client.execProtocol(message);
    const results = parse.parseResults(messages, (client as unknown as { parsers: Parameters<typeof parse.parseResults>[1] }).parsers);
    const last = results.at(-1);
    return last
      ? { rows: last.rows as Record<string, unknown>[], ...(last.affectedRows !== undefined ? { affectedRows: last.affectedRows } : {}) }
      : { rows: [] };
  });
}

/** PGlite in this thread. */
export const inlineRunner = (client: PGlite): PgliteRunner => ({
  run: (sql, params) => runStatement(client, sql, params),
  dump: () => client.dumpDataDir('none'),
  close: () => client.close(),
});

/**
 * One PGlite connection shared by the process. Statements outside a transaction go to the runner as they come,
 * several in flight, and run in the order sent. A transaction owns the connection from its `begin` to its `commit`
 * or `rollback`; anyone else's statement waits until then (it would otherwise run inside it).
 */
class SharedConnection {
  /** the connection whose transaction is open, if any */
  private owner: object | null = null;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly runner: PgliteRunner) {}

  /**
   * Null when `conn` may send now (no one else's transaction is open), else a wait for the next end of one. The
   * caller asks again after the wait and sends in the same turn of the event loop as the answer that let it.
   */
  private turn(conn: object): Promise<void> | null {
    return this.owner === null || this.owner === conn ? null : new Promise<void>((r) => this.waiting.push(r));
  }

  async query(conn: object, sql: string, params: readonly unknown[]): Promise<QueryResult<unknown>> {
    for (let wait = this.turn(conn); wait; wait = this.turn(conn)) await wait;
    const r = await this.runner.run(sql, params);
    return r.affectedRows ? { rows: r.rows, numAffectedRows: BigInt(r.affectedRows) } : { rows: r.rows };
  }

  async begin(conn: object, sql: string): Promise<void> {
    for (let wait = this.turn(conn); wait; wait = this.turn(conn)) await wait;
    this.owner = conn;
    try {
      await this.runner.run(sql, []);
    } catch (err) {
      this.release();
      throw err;
    }
  }

  async end(conn: object, sql: 'commit' | 'rollback'): Promise<void> {
    if (this.owner !== conn)
      throw new Error(`${sql} outside the connection's transaction (${this.owner === null ? 'none open' : 'another open'})`);
    try {
      await this.runner.run(sql, []);
    } finally {
      this.release();
    }
  }

  private release(): void {
    this.owner = null;
    for (const wake of this.waiting.splice(0)) wake();
  }
}

class Connection implements DatabaseConnection {
  constructor(private readonly shared: SharedConnection) {}
  executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    return this.shared.query(this, q.sql, q.parameters) as Promise<QueryResult<R>>;
  }
  // biome-ignore lint/correctness/useYield: nothing here streams; Kysely's interface has the method
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite statements are not streamed');
  }
}

class PgliteDriver implements Driver {
  private readonly shared: SharedConnection;
  constructor(runner: PgliteRunner) {
    this.shared = new SharedConnection(runner);
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return new Connection(this.shared);
  }
  async beginTransaction(conn: DatabaseConnection, settings: { isolationLevel?: string }): Promise<void> {
    await this.shared.begin(conn, settings.isolationLevel ? `start transaction isolation level ${settings.isolationLevel}` : 'begin');
  }
  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await this.shared.end(conn, 'commit');
  }
  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await this.shared.end(conn, 'rollback');
  }
  async releaseConnection(): Promise<void> {}
  /** the runner is closed by its opener (Kysely destroys only a driver that ran a statement) */
  async destroy(): Promise<void> {}
}

/** Kysely's PostgreSQL dialect over PGlite, in this thread or on its own. */
export class PgliteDialect implements Dialect {
  constructor(private readonly runner: PgliteRunner) {}
  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PgliteDriver(this.runner);
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}

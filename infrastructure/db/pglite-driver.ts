import type { PGlite, parse } from '@electric-sql/pglite';
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
import { serialize } from 'pg-protocol';
import { Parser } from 'pg-protocol/dist/parser.js';
import type { BatchPipeline } from '../../projections/shared/pipelined-batch.js';
import { costMetrics, countStatement } from '../observability/metrics.js';
import { runMessage } from './pglite-run.js';
import { preparable, stalePrepared } from './prepared.js';
import { bindOf, DESCRIBE_EXECUTE, SYNC } from './wire.js';

export type StatementResult = { rows: Record<string, unknown>[]; affectedRows?: number };
/** How PGlite turns a column's text into a value, by the column's type oid. */
export type Parsers = Parameters<typeof parse.parseResults>[1];

/** Where statements run: PGlite in this thread, or on its own thread (docs/event-store.md#pglite-on-its-own-thread). */
export interface PgliteRunner {
  /** runs one statement's wire-protocol message and answers PGlite's raw answer (the backend's messages) */
  run(message: Uint8Array): Promise<Uint8Array>;
  /** PGlite's parsers of this database (its array types' included), known once the runner is ready */
  parsers(): Parsers;
  /** the data directory as a tarball (a test's migrated template) */
  dump(): Promise<Blob | File>;
  close(): Promise<void>;
}

/**
 * One statement as one message of PostgreSQL's wire protocol (docs/event-store.md#pglite-on-its-own-thread): with
 * parameters, (parse,) bind, describe, execute and sync together, the parameters as node-postgres sends them to a
 * server (text, their types left to the server; the same values give the same statement on both); without
 * parameters, a simple query. PGlite's own `query` makes six passes for the first, asking for the parameters'
 * types first. `prepared`: the name of the session's prepared statement of this text, which is bound without
 * parsing it again; `prepare`: parse it under that name, for the next times.
 */
export function statementMessage(sql: string, params: readonly unknown[], o: Naming = {}): Uint8Array {
  if (params.length === 0) return serialize.query(sql);
  return Buffer.concat([...statementParts(sql, params, o), SYNC]);
}

/** How a statement is sent: bound by the name it is prepared under, parsed under a new name to keep, or (neither) unnamed. */
type Naming = { prepared?: string; prepare?: string };

/** One statement of the extended protocol, without its sync: (parse,) bind, describe, execute. */
function statementParts(sql: string, params: readonly unknown[], o: Naming): Uint8Array[] {
  const name = o.prepared ?? o.prepare ?? '';
  return o.prepared
    ? [bindOf(name, params), DESCRIBE_EXECUTE]
    : [serialize.parse({ name, text: sql, types: [] }), bindOf(name, params), DESCRIBE_EXECUTE];
}

const queryResult = (r: StatementResult): QueryResult<unknown> =>
  r.affectedRows ? { rows: r.rows, numAffectedRows: BigInt(r.affectedRows) } : { rows: r.rows };

type Statement = Readonly<{ sql: string; parameters: readonly unknown[] }>;
/** A statement sent through the connection for reads together, waiting for the end of its turn of the event loop. */
type Gathered = Statement & { resolve: (r: QueryResult<unknown>) => void; reject: (err: unknown) => void };

/** The rows a command's tag says it changed (`INSERT 0 3`, `UPDATE 2`…), as PGlite's `query` counts them. */
const changedRows = (tag: string): number => {
  const w = tag.split(' ');
  return w[0] === 'INSERT' ? Number(w[2]) : ['UPDATE', 'DELETE', 'COPY', 'MERGE'].includes(w[0] ?? '') ? Number(w[1]) : 0;
};

type Field = { name: string; dataTypeID: number };

/** PGlite's raw answer read: the result of each command, PostgreSQL's error if any, and whether a parse took. */
type Answers = { results: StatementResult[]; error: unknown; parsed: boolean };
/** The same, of one statement: the result of its last command, with the rows every command changed. */
type Answer = { result: StatementResult; error: unknown; parsed: boolean };

/**
 * The rows of PGlite's raw answer, each column through PGlite's own parser of its type, as PGlite's `query` gives
 * them, one result per command completed, and PostgreSQL's error (PGlite's `DatabaseError`, with `code`,
 * `constraint`, `detail`…). The rows are built here rather than by PGlite's generic result builder, which made an
 * array of pairs per row and was the largest single cost on the process's thread
 * (docs/event-store.md#pglite-on-its-own-thread).
 */
export function readAnswers(raw: Uint8Array, parsers: Parsers): Answers {
  let names: string[] = [];
  let readers: ((text: string, type: number) => unknown)[] = [];
  let types: number[] = [];
  let rows: Record<string, unknown>[] = [];
  const results: StatementResult[] = [];
  let error: unknown = null;
  let parsed = false;
  // node-postgres's parser reads each field straight from the bytes (PGlite's copies every field out first)
  new Parser().parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), (m) => {
    switch (m.name) {
      case 'parseComplete':
        parsed = true;
        break;
      case 'rowDescription': {
        const fields = (m as unknown as { fields: Field[] }).fields;
        names = fields.map((f) => f.name);
        types = fields.map((f) => f.dataTypeID);
        readers = types.map((t) => parsers[t] ?? ((text: string) => text));
        rows = [];
        break;
      }
      case 'dataRow': {
        const values = (m as unknown as { fields: (string | null)[] }).fields;
        const row: Record<string, unknown> = {};
        for (let i = 0; i < values.length; i++) {
          const v = values[i];
          row[names[i]!] = v === null || v === undefined ? null : readers[i]!(v, types[i]!);
        }
        rows.push(row);
        break;
      }
      case 'commandComplete':
        results.push({ rows, affectedRows: changedRows((m as unknown as { text: string }).text) });
        rows = [];
        break;
      case 'error':
        error ??= m;
        break;
    }
  });
  return { results, error, parsed };
}

/** One statement's answer (a `begin` sent with it, or closes before it, completed commands of their own). */
export function readAnswer(raw: Uint8Array, parsers: Parsers): Answer {
  const { results, error, parsed } = readAnswers(raw, parsers);
  const last = results.at(-1);
  const result = last ? { rows: last.rows, affectedRows: results.reduce((n, r) => n + (r.affectedRows ?? 0), 0) } : { rows: [] };
  return { result, error, parsed };
}

/** Statements the session keeps prepared (docs/event-store.md#prepared-statements). */
const PREPARED_KEPT = 500;

/** prepared statements' names, unique in the process (two drivers on one database never share one) */
let preparedSeq = 0;

/** PGlite in this thread. */
export const inlineRunner = (client: PGlite): PgliteRunner => ({
  run: (message) => runMessage(client, message),
  parsers: () => (client as unknown as { parsers: Parsers }).parsers,
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
  /** that transaction's `begin`, while no statement of it has been sent */
  private unsentBegin: Uint8Array | null = null;
  private readonly waiting: (() => void)[] = [];
  /** statement text → the name it is prepared under in the session, least recently used first */
  private readonly prepared = new Map<string, string>();
  /** texts whose parse under a name is on its way (the same text meanwhile goes unnamed) */
  private readonly preparing = new Set<string>();
  /** prepared statements let go of, to close with the next message */
  private closing: string[] = [];

  constructor(private readonly runner: PgliteRunner) {}

  /**
   * Null when `conn` may send now (no one else's transaction is open), else a wait for the next end of one. The
   * caller asks again after the wait and sends in the same turn of the event loop as the answer that let it.
   */
  private turn(conn: object): Promise<void> | null {
    return this.owner === null || this.owner === conn ? null : new Promise<void>((r) => this.waiting.push(r));
  }

  async query(conn: object, sql: string, params: readonly unknown[], fresh = false): Promise<QueryResult<unknown>> {
    for (let wait = this.turn(conn); wait; wait = this.turn(conn)) await wait;
    const naming = this.naming(sql, params, fresh);
    const { prepared, prepare } = naming;
    let answer: Answer;
    try {
      answer = readAnswer(await this.run(conn, statementMessage(sql, params, naming)), this.runner.parsers());
    } finally {
      if (prepare) this.preparing.delete(sql);
    }
    if (prepare && answer.parsed) this.keep(sql, prepare);
    if (answer.error) {
      if (prepared && stalePrepared(answer.error)) {
        this.forget(sql);
        // outside a transaction nothing was done: the statement runs again, prepared afresh
        if (this.owner !== conn) return this.query(conn, sql, params, true);
      }
      throw answer.error;
    }
    return queryResult(answer.result);
  }

  /** a statement with parameters is parsed and planned once per session, then bound by name */
  private naming(sql: string, params: readonly unknown[], fresh: boolean): Naming {
    const prepared = params.length > 0 && !fresh ? this.prepared.get(sql) : undefined;
    if (prepared) {
      this.prepared.delete(sql);
      this.prepared.set(sql, prepared);
      return { prepared };
    }
    if (!this.preparing.has(sql) && preparable(sql, params)) {
      this.preparing.add(sql);
      return { prepare: `avp_${++preparedSeq}` };
    }
    return {};
  }

  /** statements asked for through the connection for reads together in this turn of the event loop, not sent yet */
  private gathered: Gathered[] = [];

  /**
   * A read whose caller awaits it with others (docs/event-store.md#reads-together): every statement asked for this
   * way in one turn of the event loop goes to PGlite in one message, each statement bound and executed, one sync at
   * the end. PostgreSQL runs them as one implicit transaction; after an error it skips the rest, and each of them
   * fails with that error. A lone statement goes as any other.
   */
  together(sql: string, params: readonly unknown[]): Promise<QueryResult<unknown>> {
    return new Promise((resolve, reject) => {
      // the callers' chains reach here over several microtasks; the tick after them all sends
      if (this.gathered.push({ sql, parameters: params, resolve, reject }) === 1)
        process.nextTick(() => void this.sendTogether(this.gathered.splice(0)));
    });
  }

  private async sendTogether(batch: readonly Gathered[], fresh = false): Promise<void> {
    if (batch.length === 1 && !fresh) {
      const [g] = batch;
      return this.query({}, g!.sql, g!.parameters).then(g!.resolve, g!.reject);
    }
    try {
      const me = {};
      for (let wait = this.turn(me); wait; wait = this.turn(me)) await wait;
      const answers = await this.sendPrepared(me, batch, fresh, (parts) => [...parts, SYNC]);
      // nothing was done: they run again, prepared afresh
      if (answers === 'stale') return await this.sendTogether(batch, true);
      if (answers.error) throw answers.error;
      if (answers.results.length !== batch.length)
        throw new Error(`${batch.length} statements sent together, ${answers.results.length} answered`);
      for (const [i, g] of batch.entries()) g.resolve(queryResult(answers.results[i]!));
    } catch (err) {
      for (const g of batch) g.reject(err);
    }
  }

  /**
   * Statements in one message (`frame` puts their parts in it), each with parameters bound by the name it is prepared
   * under, or parsed under a new name (docs/event-store.md#prepared-statements), kept once the message went through
   * and closed if it did not. A prepared statement whose table changed shape since fails the message: the names of
   * the message's prepared statements are let go of, and `stale` answered, for the caller to send it again.
   */
  private async sendPrepared(
    me: object,
    statements: readonly Statement[],
    fresh: boolean,
    frame: (parts: Uint8Array[]) => Uint8Array[],
  ): Promise<Answers | 'stale'> {
    const named = statements.map((q) => this.naming(q.sql, q.parameters, fresh));
    let answers: Answers;
    try {
      const parts = statements.flatMap((q, i) => statementParts(q.sql, q.parameters, named[i]!));
      answers = readAnswers(await this.run(me, Buffer.concat(frame(parts))), this.runner.parsers());
    } finally {
      for (const [i, n] of named.entries()) if (n.prepare) this.preparing.delete(statements[i]!.sql);
    }
    if (!answers.error) {
      for (const [i, n] of named.entries()) if (n.prepare) this.keep(statements[i]!.sql, n.prepare);
      return answers;
    }
    // which of the new names took is not told apart: all are closed (closing one never made is no error)
    for (const n of named) if (n.prepare) this.closing.push(n.prepare);
    if (!named.some((n) => n.prepared) || !stalePrepared(answers.error)) return answers;
    for (const [i, n] of named.entries()) if (n.prepared) this.forget(statements[i]!.sql);
    return 'stale';
  }

  private keep(sql: string, name: string): void {
    this.prepared.set(sql, name);
    if (this.prepared.size <= PREPARED_KEPT) return;
    const [oldest, oldestName] = this.prepared.entries().next().value!;
    this.prepared.delete(oldest);
    this.closing.push(oldestName);
  }

  private forget(sql: string): void {
    const name = this.prepared.get(sql);
    if (name === undefined) return;
    this.prepared.delete(sql);
    this.closing.push(name);
  }

  /**
   * Several statements as one transaction in one message (docs/event-store.md#pipelined-batches): `begin`, each
   * statement (prepared once per session, as a statement alone), one sync, `commit`. PostgreSQL skips the rest of
   * the message after an error and the `commit` then rolls the transaction back; the first error is thrown. The
   * connection is never held open between round trips, as a transaction made statement by statement holds it.
   */
  async pipeline(statements: readonly Statement[], fresh = false): Promise<void> {
    const me = {};
    for (let wait = this.turn(me); wait; wait = this.turn(me)) await wait;
    // counted as the query builder counts the statements it runs itself
    countStatement('begin', 0);
    for (const q of statements) countStatement(q.sql, 0);
    const t = performance.now();
    const answers = await this.sendPrepared(me, statements, fresh, (parts) => [
      serialize.query('begin'),
      ...parts,
      SYNC,
      serialize.query('commit'),
    ]);
    countStatement('commit', performance.now() - t);
    // nothing of it stayed: it runs again, every statement prepared afresh
    if (answers === 'stale') return this.pipeline(statements, true);
    if (answers.error) throw answers.error;
  }

  /**
   * Takes the connection for `conn`'s transaction. Its `begin` is not sent alone: it goes with the transaction's
   * first statement, in the same message (one round trip to PGlite's thread fewer per transaction).
   */
  async begin(conn: object, sql: string): Promise<void> {
    for (let wait = this.turn(conn); wait; wait = this.turn(conn)) await wait;
    this.owner = conn;
    this.unsentBegin = statementMessage(sql, []);
    // counted as a statement, as the query builder counts the others; it travels with the first one
    countStatement(sql, 0);
  }

  async end(conn: object, sql: 'commit' | 'rollback'): Promise<void> {
    if (this.owner !== conn)
      throw new Error(`${sql} outside the connection's transaction (${this.owner === null ? 'none open' : 'another open'})`);
    try {
      // a transaction that sent nothing has nothing to end
      if (this.unsentBegin === null) {
        const t = performance.now();
        const answer = readAnswer(await this.run(conn, statementMessage(sql, [])), this.runner.parsers());
        countStatement(sql, performance.now() - t);
        if (answer.error) throw answer.error;
      }
    } finally {
      this.unsentBegin = null;
      this.release();
    }
  }

  /** sends a message (after the closes of statements let go of, and a `begin` not sent yet) and answers PGlite's raw answer */
  private async run(conn: object, message: Uint8Array): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    if (this.closing.length > 0) {
      // the statements let go of are closed first, in their own sync, whatever the message is
      for (const name of this.closing) parts.push(serialize.close({ type: 'S', name }));
      parts.push(SYNC);
      this.closing = [];
    }
    const begin = this.owner === conn ? this.unsentBegin : null;
    if (begin) {
      this.unsentBegin = null;
      parts.push(begin);
    }
    parts.push(message);
    costMetrics.embeddedMessages.inc();
    return this.runner.run(parts.length === 1 ? message : Buffer.concat(parts));
  }

  private release(): void {
    this.owner = null;
    for (const wake of this.waiting.splice(0)) wake();
  }
}

/** A statement's connection: statements sent one by one, or (`together`) gathered per turn of the event loop. */
class Connection implements DatabaseConnection {
  constructor(
    private readonly shared: SharedConnection,
    private readonly together: boolean,
  ) {}
  executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    return (this.together ? this.shared.together(q.sql, q.parameters) : this.shared.query(this, q.sql, q.parameters)) as Promise<
      QueryResult<R>
    >;
  }
  // biome-ignore lint/correctness/useYield: nothing here streams; Kysely's interface has the method
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite statements are not streamed');
  }
}

class PgliteDriver implements Driver {
  constructor(
    private readonly shared: SharedConnection,
    private readonly together: boolean,
  ) {}
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return new Connection(this.shared, this.together);
  }
  async beginTransaction(conn: DatabaseConnection, settings: { isolationLevel?: string }): Promise<void> {
    if (this.together) throw new Error('reads together run outside transactions');
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

/** Kysely's PostgreSQL dialect over PGlite's one shared connection. */
class SharedDialect implements Dialect {
  constructor(
    protected readonly shared: SharedConnection,
    private readonly gathers: boolean,
  ) {}
  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PgliteDriver(this.shared, this.gathers);
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}

/** Kysely's PostgreSQL dialect over PGlite, in this thread or on its own. */
export class PgliteDialect extends SharedDialect {
  constructor(runner: PgliteRunner) {
    super(new SharedConnection(runner), false);
  }
  /** statements in one message, as one transaction (docs/event-store.md#pipelined-batches), on the same connection */
  readonly pipeline: BatchPipeline = (statements) => this.shared.pipeline(statements);
  /** the same connection, for reads awaited together: those of one turn go as one message (docs/event-store.md#reads-together) */
  readonly together: Dialect = new SharedDialect(this.shared, true);
}

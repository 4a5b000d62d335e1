import type pg from 'pg';
import { DatabaseError, serialize } from 'pg-protocol';
import type { BatchPipeline } from '../../projections/shared/pipelined-batch.js';
import { countStatement } from '../observability/metrics.js';
import { OneMessage } from './one-message.js';
import { stalePrepared } from './prepared.js';
import type { PoolStatements } from './server-prepared.js';
import { bindOf, DESCRIBE_EXECUTE, SYNC } from './wire.js';

/**
 * On a PostgreSQL server, statements as one transaction in one message (docs/event-store.md#pipelined-batches): each
 * statement bound and executed, and one `Sync` at the end. PostgreSQL runs what comes before a `Sync` as one implicit
 * transaction: committed at the `Sync` when every statement succeeded; when one fails, the rest is skipped and nothing
 * of it stays. One round trip and one write instead of a `begin`, each statement, and a `commit`, each waiting for the
 * one before. The statements are prepared as the connection prepares those it runs alone
 * (docs/event-store.md#prepared-statements): bound by the name the connection has a text under, or parsed under a new
 * name, kept once the batch went through and closed with the connection's next message if it did not.
 */
export function serverPipeline(pool: pg.Pool, prepared: PoolStatements): BatchPipeline {
  const send = async (statements: Parameters<BatchPipeline>[0], retried: boolean): Promise<void> => {
    const client = await pool.connect();
    const session = prepared.of(client);
    const parts: Buffer[] = session.takeCloses();
    /** texts bound by a name the connection had, and those parsed under a new name in this batch */
    const bound: string[] = [];
    const parsed = new Map<string, string>();
    for (const q of statements) {
      // a text the batch already parsed under a name is bound by it, as one the connection had
      let name = session.prepared(q.sql) ?? parsed.get(q.sql);
      if (name !== undefined) {
        if (!parsed.has(q.sql)) bound.push(q.sql);
      } else {
        name = session.fresh(q.sql, q.parameters);
        if (name !== undefined) parsed.set(q.sql, name);
        parts.push(serialize.parse({ name: name ?? '', text: q.sql, types: [] }));
      }
      parts.push(bindOf(name ?? '', q.parameters), DESCRIBE_EXECUTE);
    }
    parts.push(SYNC);
    const message = Buffer.concat(parts);
    let failure: unknown = null;
    const t = performance.now();
    try {
      await new Promise<void>((resolve, reject) => {
        client.query(new OneMessage(message, (err) => (err ? reject(err) : resolve())));
      });
      for (const [sql, name] of parsed) session.keep(sql, name);
    } catch (err) {
      failure = err;
      for (const name of parsed.values()) session.unsure(name);
    } finally {
      // PostgreSQL's own error leaves the connection usable; anything else (a lost connection) retires it
      client.release(failure !== null && !(failure instanceof DatabaseError) ? (failure as Error) : undefined);
    }
    // counted as the query builder counts the statements it runs itself
    for (const [i, q] of statements.entries()) countStatement(q.sql, i === statements.length - 1 ? performance.now() - t : 0);
    if (failure === null) return;
    if (bound.length === 0 || retried || !stalePrepared(failure)) throw failure;
    // a prepared statement whose table changed shape: nothing of the batch stayed, and it goes again, parsed afresh
    for (const sql of bound) session.forget(sql);
    return send(statements, true);
  };
  return async (statements) => {
    if (statements.length > 0) await send(statements, false);
  };
}

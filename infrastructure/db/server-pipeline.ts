import type pg from 'pg';
import { DatabaseError, serialize } from 'pg-protocol';
import type { BatchPipeline } from '../../projections/shared/pipelined-batch.js';
import { countStatement } from '../observability/metrics.js';
import { bindOf, DESCRIBE_EXECUTE, SYNC } from './wire.js';

/** The part of node-postgres's connection a batch writes to (its own queries write through the same method). */
type Wire = { _send(message: Buffer): void };

/**
 * One batch of statements as a query of node-postgres (its `Submittable` interface): written as one message and
 * answered once. node-postgres hands it the backend's messages until the one `ReadyForQuery`; the first error ends it
 * (node-postgres then stops handing it messages, and the connection takes its next query after that `ReadyForQuery`).
 */
class Batch implements pg.Submittable {
  private ended = false;
  constructor(
    private readonly message: Buffer,
    private readonly end: (err: unknown) => void,
  ) {}
  submit(connection: unknown): void {
    (connection as Wire)._send(this.message);
  }
  private finish(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.end(err);
  }
  handleError(err: unknown): void {
    this.finish(err ?? new Error('the pipelined batch failed'));
  }
  handleReadyForQuery(): void {
    this.finish(null);
  }
  // rows and tags of the statements are not needed: a batch answers nothing
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(connection: { sendCopyFail(msg: string): void }): void {
    connection.sendCopyFail('a pipelined batch copies nothing');
  }
  handleCopyData(): void {}
}

/**
 * On a PostgreSQL server, statements as one transaction in one message (docs/event-store.md#pipelined-batches): each
 * statement parsed (unnamed), bound and executed, and one `Sync` at the end. PostgreSQL runs what comes before a
 * `Sync` as one implicit transaction: committed at the `Sync` when every statement succeeded; when one fails, the rest
 * is skipped and nothing of it stays. One round trip and one write instead of a `begin`, each statement, and a
 * `commit`, each waiting for the one before.
 */
export function serverPipeline(pool: pg.Pool): BatchPipeline {
  return async (statements) => {
    if (statements.length === 0) return;
    const parts: Buffer[] = [];
    for (const q of statements) parts.push(serialize.parse({ text: q.sql, types: [] }), bindOf('', q.parameters), DESCRIBE_EXECUTE);
    parts.push(SYNC);
    const message = Buffer.concat(parts);
    const client = await pool.connect();
    let failure: unknown = null;
    const t = performance.now();
    try {
      await new Promise<void>((resolve, reject) => {
        client.query(new Batch(message, (err) => (err ? reject(err) : resolve())));
      });
    } catch (err) {
      failure = err;
    } finally {
      // PostgreSQL's own error leaves the connection usable; anything else (a lost connection) retires it
      client.release(failure !== null && !(failure instanceof DatabaseError) ? (failure as Error) : undefined);
    }
    // counted as the query builder counts the statements it runs itself
    for (const [i, q] of statements.entries()) countStatement(q.sql, i === statements.length - 1 ? performance.now() - t : 0);
    if (failure !== null) throw failure;
  };
}

import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  sql,
} from 'kysely';
import type { Checkpoint, RecordedEvent } from '../../application/ports/event-store.port.js';
import { CheckpointMovedError } from './checkpoint-runner.js';
import type { KeptRows } from './kept-rows.js';
import { NotPipelined, type Projector, UNANSWERED } from './projector.js';
import type { ReadDb } from './read-db.js';

/**
 * Statements run as one transaction in one message (the embedded database offers it): the first error is thrown
 * and nothing of them stays (docs/event-store.md#pipelined-batches).
 */
export type BatchPipeline = (statements: readonly { sql: string; parameters: readonly unknown[] }[]) => Promise<void>;

const WRITES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode']);

/**
 * A view of `db` for one batch: a read made before any write runs at once (the projector's lease makes it the
 * only writer of its rows, so nothing moves them meanwhile); a write without `returning` is kept, not run, and
 * answers nothing. Anything else (a read after a write, which would not see it; a write whose answer is used; a
 * raw statement, which cannot be told apart) ends the recording.
 */
function recording(db: Kysely<ReadDb>): { view: Kysely<ReadDb>; writes: CompiledQuery[]; reads: () => number } {
  const writes: CompiledQuery[] = [];
  let reads = 0;
  const connection: DatabaseConnection = {
    async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
      const kind = q.query.kind;
      if (kind === 'SelectQueryNode') {
        if (writes.length > 0) throw new NotPipelined('a read after a write');
        reads++;
        return db.executeQuery<R>(q);
      }
      if (WRITES.has(kind) && !(q.query as { returning?: unknown }).returning) {
        writes.push(q);
        return { rows: [], numAffectedRows: UNANSWERED };
      }
      throw new NotPipelined(kind);
    },
    // biome-ignore lint/correctness/useYield: nothing is streamed in a batch; Kysely's interface has the method
    async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
      throw new NotPipelined('a streamed read');
    },
  };
  const refuse = async () => {
    throw new NotPipelined('a transaction');
  };
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: async () => connection,
    beginTransaction: refuse,
    commitTransaction: refuse,
    rollbackTransaction: refuse,
    releaseConnection: async () => undefined,
    destroy: async () => undefined,
  };
  const view = new Kysely<ReadDb>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createQueryCompiler: () => new PostgresQueryCompiler(),
      createIntrospector: (k) => new PostgresIntrospector(k),
    },
  });
  return { view, writes, reads: () => reads };
}

/**
 * What became of a batch: its writes and checkpoint `stored`, or `untouched`: it neither read nor wrote anything, so
 * nothing was sent and the checkpoint stays where it is stored (the caller stores it later, `leaveUntouched`).
 */
export type BatchOutcome = 'stored' | 'untouched';

/**
 * Applies a batch of a projector that reads before it writes (`Projector.pipelined`) as one message: its reads
 * first, then its writes and the checkpoint's compare-and-set, one transaction (docs/event-store.md#pipelined-batches).
 * The compare-and-set divides by the rows it moved, so a checkpoint moved elsewhere fails the whole message. Returns
 * null, having written nothing, when the batch did something a pipeline cannot carry. With `leaveUntouched`, a batch
 * that neither read nor wrote sends nothing at all (docs/event-store.md#untouched-batches).
 */
export async function pipelinedBatch(
  db: Kysely<ReadDb>,
  pipeline: BatchPipeline,
  p: Projector,
  from: Checkpoint,
  to: Checkpoint,
  batch: readonly RecordedEvent[],
  o: { leaveUntouched?: boolean; kept?: KeptRows<unknown> } = {},
): Promise<BatchOutcome | null> {
  const { view, writes, reads } = recording(db);
  try {
    o.kept?.begin();
    await p.applyBatch(view, batch, o.kept);
  } catch (err) {
    if (err instanceof NotPipelined) return null;
    throw err;
  }
  if (o.leaveUntouched && writes.length === 0 && reads() === 0) return 'untouched';
  const move = sql`with moved as (
      update projection_checkpoints set checkpoint = ${to}, updated_at = ${new Date()}
       where name = ${p.name} and checkpoint = ${from} returning 1)
    select 1 / count(*)::int as moved from moved`.compile(db);
  try {
    await pipeline([...writes, move]);
  } catch (err) {
    // division by zero: the compare-and-set moved no row
    if ((err as { code?: string }).code === '22012') throw new CheckpointMovedError(p.name);
    throw err;
  }
  return 'stored';
}

import { EventEmitter } from 'node:events';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ClockPort } from '../../application/ports/clock.port.js';
import {
  type AppendResult,
  type Checkpoint,
  compareCheckpoints,
  type EventFilter,
  type EventMetadata,
  type EventStorePort,
  type ExpectedRevision,
  makeCheckpoint,
  type NewEvent,
  parseCheckpoint,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  START,
  type SubscribeOptions,
  type Subscription,
  type SubscriptionHandler,
  WrongExpectedRevisionError,
} from '../../application/ports/event-store.port.js';
import { categoryOf } from '../../domain/shared/streams.js';
import type { Db, EventsTable } from '../db/database.js';
import { runSubscriptionLoop } from './subscription-loop.js';
import { upcast } from './upcasters.js';

const UNIQUE_VIOLATION = '23505';
const COLUMNS = [
  'global_position',
  sql<string>`transaction_id::text`.as('transaction_id'),
  'event_id',
  'stream_name',
  'stream_category',
  'stream_revision',
  'event_type',
  'data',
  'metadata',
  'created_at',
] as const;

type Row = Selectable<EventsTable>;

/**
 * Event store on a PostgreSQL `events` table (PGlite or a server), through Kysely.
 *
 * Readers never skip a late-committing transaction: every row stores `pg_current_xact_id()`, readers only
 * see rows whose transaction id is below `pg_snapshot_xmin(pg_current_snapshot())` (no older transaction is
 * still running), and order by `(transaction_id, global_position)`. That pair is the checkpoint.
 */
export class PgEventStore implements EventStorePort {
  readonly kind = 'postgres' as const;
  private readonly appended = new EventEmitter();

  constructor(
    private readonly db: Kysely<Db>,
    private readonly clock: ClockPort,
    private readonly o: { pollIntervalMs?: number } = {},
  ) {
    this.appended.setMaxListeners(0);
  }

  async appendToStream(stream: string, events: readonly NewEvent[], o: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    if (events.length === 0) throw new Error('appendToStream needs at least one event');
    try {
      const result = await this.db.transaction().execute(async (trx) => {
        const replay = await this.idempotentReplay(trx, stream, events);
        if (replay) return replay;
        const first = await this.reserveRevisions(trx, stream, BigInt(events.length), o.expectedRevision);
        const createdAt = this.clock.now();
        const rows = await trx
          .insertInto('events')
          .values(
            events.map((e, i) => ({
              transaction_id: sql<string>`pg_current_xact_id()`,
              event_id: e.id,
              stream_name: stream,
              stream_category: categoryOf(stream),
              stream_revision: String(first + BigInt(i)),
              event_type: e.type,
              data: JSON.stringify(e.data),
              metadata: JSON.stringify({ ...e.metadata, schemaVersion: e.metadata.schemaVersion ?? 1 }),
              created_at: createdAt,
            })),
          )
          .returning(['global_position', sql<string>`transaction_id::text`.as('transaction_id')])
          .execute();
        const last = rows[rows.length - 1]!;
        return {
          nextRevision: first + BigInt(events.length) - 1n,
          checkpoint: makeCheckpoint(BigInt(last.transaction_id), BigInt(last.global_position)),
        };
      });
      this.appended.emit('appended');
      return result;
    } catch (err) {
      if (isUniqueViolation(err)) {
        // a concurrent writer took the revision or the same event ids: replay or report the conflict
        const replay = await this.idempotentReplay(this.db, stream, events);
        if (replay) return replay;
        throw new WrongExpectedRevisionError(stream, o.expectedRevision, await this.currentRevision(stream));
      }
      throw err;
    }
  }

  /** Appending the same event ids again (a client retry) succeeds without writing anything. */
  private async idempotentReplay(db: Kysely<Db>, stream: string, events: readonly NewEvent[]): Promise<AppendResult | null> {
    const existing = await db
      .selectFrom('events')
      .select(['event_id', 'stream_name', 'stream_revision', 'global_position', sql<string>`transaction_id::text`.as('transaction_id')])
      .where(
        'event_id',
        'in',
        events.map((e) => e.id),
      )
      .orderBy('global_position')
      .execute();
    if (existing.length === 0) return null;
    const sameBatch =
      existing.length === events.length && existing.every((r, i) => r.stream_name === stream && r.event_id === events[i]!.id);
    if (!sameBatch) throw new WrongExpectedRevisionError(stream, 'any', await this.currentRevision(stream));
    const last = existing[existing.length - 1]!;
    return {
      nextRevision: BigInt(last.stream_revision),
      checkpoint: makeCheckpoint(BigInt(last.transaction_id), BigInt(last.global_position)),
    };
  }

  /** Moves the stream's revision forward under a row lock and returns the first new revision. */
  private async reserveRevisions(trx: Kysely<Db>, stream: string, count: bigint, expected: ExpectedRevision): Promise<bigint> {
    const fail = async (): Promise<never> => {
      const row = await trx.selectFrom('streams').select('revision').where('stream_name', '=', stream).executeTakeFirst();
      throw new WrongExpectedRevisionError(stream, expected, row ? BigInt(row.revision) : 'no_stream');
    };
    if (expected === 'no_stream') {
      const r = await trx
        .insertInto('streams')
        .values({ stream_name: stream, revision: String(count - 1n) })
        .onConflict((oc) => oc.column('stream_name').doNothing())
        .returning('revision')
        .executeTakeFirst();
      return r ? 0n : fail();
    }
    if (expected === 'any') {
      const r = await trx
        .insertInto('streams')
        .values({ stream_name: stream, revision: String(count - 1n) })
        .onConflict((oc) => oc.column('stream_name').doUpdateSet({ revision: sql`streams.revision + ${String(count)}::bigint` }))
        .returning('revision')
        .executeTakeFirstOrThrow();
      return BigInt(r.revision) - count + 1n;
    }
    let q = trx
      .updateTable('streams')
      .set({ revision: sql`revision + ${String(count)}::bigint` })
      .where('stream_name', '=', stream);
    if (typeof expected === 'bigint') q = q.where('revision', '=', String(expected));
    const r = await q.returning('revision').executeTakeFirst();
    return r ? BigInt(r.revision) - count + 1n : fail();
  }

  private async currentRevision(stream: string): Promise<bigint | 'no_stream'> {
    const row = await this.db.selectFrom('streams').select('revision').where('stream_name', '=', stream).executeTakeFirst();
    return row ? BigInt(row.revision) : 'no_stream';
  }

  async readStream(stream: string, o: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = o.direction === 'backwards';
    let q = this.db.selectFrom('events').select(COLUMNS).where('stream_name', '=', stream);
    if (o.fromRevision !== undefined) q = q.where('stream_revision', backwards ? '<=' : '>=', String(o.fromRevision));
    q = q.orderBy('stream_revision', backwards ? 'desc' : 'asc');
    if (o.maxCount !== undefined) q = q.limit(o.maxCount);
    return (await q.execute()).map(toRecorded);
  }

  async readAll(o: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const [txId, pos] = parseCheckpoint(o.after ?? START);
    let q = this.db
      .selectFrom('events')
      .select(COLUMNS)
      .where(sql<boolean>`transaction_id < pg_snapshot_xmin(pg_current_snapshot())`)
      .where(sql<boolean>`(transaction_id, global_position) > (${String(txId)}::xid8, ${String(pos)}::bigint)`);
    q = applyFilter(q, o.filter);
    const rows = await q
      .orderBy(sql`events.transaction_id`)
      .orderBy('global_position')
      .limit(o.maxCount ?? 1000)
      .execute();
    return rows.map(toRecorded);
  }

  async headCheckpoint(): Promise<Checkpoint> {
    const row = await this.db
      .selectFrom('events')
      .select(['global_position', sql<string>`transaction_id::text`.as('transaction_id')])
      .where(sql<boolean>`transaction_id < pg_snapshot_xmin(pg_current_snapshot())`)
      .orderBy(sql`events.transaction_id`, 'desc')
      .orderBy('global_position', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? makeCheckpoint(BigInt(row.transaction_id), BigInt(row.global_position)) : START;
  }

  subscribe(o: SubscribeOptions, handler: SubscriptionHandler): Subscription {
    return runSubscriptionLoop({
      after: o.after,
      batchSize: o.batchSize ?? 500,
      pollIntervalMs: this.o.pollIntervalMs ?? 100,
      read: (after, maxCount) => this.readAll({ after, maxCount, ...(o.filter ? { filter: o.filter } : {}) }),
      head: () => this.headCheckpoint(),
      wake: (fn) => {
        this.appended.on('appended', fn);
        return () => this.appended.off('appended', fn);
      },
      handler,
      ...(o.onError ? { onError: o.onError } : {}),
    });
  }

  async close(): Promise<void> {
    this.appended.removeAllListeners();
  }
}

function applyFilter<Q extends { where: (...a: never[]) => unknown }>(q: Q, filter?: EventFilter): Q {
  if (!filter) return q;
  const qq = q as unknown as { where: (c: string, op: string, v: readonly string[]) => Q };
  if ('eventTypes' in filter)
    return filter.eventTypes.length ? qq.where('event_type', 'in', filter.eventTypes) : qq.where('event_type', 'in', ['\u0000']);
  return filter.streamCategories.length
    ? qq.where('stream_category', 'in', filter.streamCategories)
    : qq.where('stream_category', 'in', ['\u0000']);
}

const isUniqueViolation = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { code?: string }).code === UNIQUE_VIOLATION;

const parseJson = (v: unknown): Record<string, unknown> => (typeof v === 'string' ? JSON.parse(v) : v) as Record<string, unknown>;

function toRecorded(r: Row): RecordedEvent {
  const metadata = parseJson(r.metadata) as EventMetadata;
  const up = upcast(r.event_type, parseJson(r.data), metadata.schemaVersion ?? 1);
  return {
    id: r.event_id,
    type: r.event_type,
    data: up,
    metadata,
    streamName: r.stream_name,
    streamRevision: BigInt(r.stream_revision),
    globalPosition: BigInt(r.global_position),
    checkpoint: makeCheckpoint(BigInt(r.transaction_id), BigInt(r.global_position)),
    createdAt: new Date(r.created_at).toISOString(),
  };
}

export { compareCheckpoints };

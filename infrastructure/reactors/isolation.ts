import type { Kysely } from 'kysely';
import client from 'prom-client';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { storableText } from '../../domain/shared/storable-text.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { isConnectionError } from '../db/connection-errors.js';

export interface IsolatedWorkTable {
  consumer: string;
  item: string;
  stream: string | null;
  event_type: string | null;
  checkpoint: string | null;
  account_id: string | null;
  error: string;
  tries: number;
  isolated_at: Date | string;
}

declare module '../../projections/shared/read-db.js' {
  interface ReadDb {
    isolated_work: IsolatedWorkTable;
  }
}

const isolatedTotal = new client.Counter({
  name: 'isolated_work_total',
  help: 'Items (reactor events, webhook attempts) set aside because handling them failed for good (docs/operations.md#isolated-work)',
  labelNames: ['consumer'],
});

/** Names of errors that say "not now" rather than "never": another try later can succeed. */
const TRANSIENT_NAMES = new Set(['CheckpointMovedError', 'LeaseLostError', 'WrongExpectedRevisionError', 'YieldedError']);
const TRANSIENT_CODES = new Set(['CONCURRENCY_CONFLICT', 'READ_MODEL_TIMEOUT', 'SERVICE_UNAVAILABLE']);

/**
 * Whether an error is worth retrying as it is (docs/operations.md#isolated-work): the database or event store
 * away, a concurrent writer, a lost lease, a read model still catching up. Anything else (a value the database
 * refuses, a bug) fails the same way every time, and is isolated instead of retried for ever.
 */
export function isTransient(err: unknown): boolean {
  if (isConnectionError(err)) return true;
  const e = err as { name?: unknown; code?: unknown } | null;
  return (
    !!e && ((typeof e.name === 'string' && TRANSIENT_NAMES.has(e.name)) || (typeof e.code === 'string' && TRANSIENT_CODES.has(e.code)))
  );
}

export type IsolatedItem = Readonly<{
  consumer: string;
  item: string;
  stream?: string | null;
  eventType?: string | null;
  checkpoint?: string | null;
  accountId?: string | null;
  tries: number;
}>;

/** Records an isolated item (a row saying why, a log line, a metric); never throws past a database outage. */
export class WorkIsolation {
  constructor(
    private readonly db: Kysely<ReadDb>,
    private readonly log: LoggerPort,
  ) {}

  async isolate(x: IsolatedItem, err: unknown): Promise<void> {
    const error = storableText(err instanceof Error ? `${err.name}: ${err.message}` : String(err), 2000);
    this.log.error({ err, ...x }, 'work isolated: handling it fails every time; the rest goes on (docs/operations.md#isolated-work)');
    isolatedTotal.inc({ consumer: x.consumer });
    const row = {
      consumer: x.consumer,
      item: x.item,
      stream: x.stream ?? null,
      event_type: x.eventType ?? null,
      checkpoint: x.checkpoint ?? null,
      account_id: x.accountId ?? null,
      error,
      tries: x.tries,
      isolated_at: new Date(),
    };
    await this.db
      .insertInto('isolated_work')
      .values(row)
      .onConflict((oc) => oc.columns(['consumer', 'item']).doUpdateSet({ error, tries: x.tries, isolated_at: row.isolated_at }))
      .execute();
  }

  list(limit = 100): Promise<IsolatedWorkTable[]> {
    return this.db.selectFrom('isolated_work').selectAll().orderBy('isolated_at', 'desc').limit(limit).execute();
  }
}

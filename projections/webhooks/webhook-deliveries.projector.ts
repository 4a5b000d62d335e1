import type { Insertable, Kysely, Selectable } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { WebhookDeliveryEvent } from '../../domain/webhook/webhook-delivery.decider.js';
import type { KeptRows } from '../shared/kept-rows.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';
import type { WebhookDeliveriesTable, WebhookDeliveryAttemptsTable, WebhookDueAttemptsTable } from './tables.js';

type Row = Insertable<WebhookDeliveriesTable>;
type Attempt = Insertable<WebhookDeliveryAttemptsTable>;
/** What the batch does to a delivery's timeline row: put a new one, move the existing one, or remove it. */
type DueChange =
  | { op: 'insert'; row: Insertable<WebhookDueAttemptsTable> }
  /** put the row whether or not it is there (a finished delivery sent again) */
  | { op: 'upsert'; row: Insertable<WebhookDueAttemptsTable> }
  | { op: 'update'; attempt: number; dueAt: string; revision: string }
  | { op: 'delete' };

/** How many pending deliveries the live projector keeps as it wrote them (docs/event-store.md#kept-rows). */
const KEPT_DELIVERIES = 10_000;

/** Rows are written in chunks, well inside PostgreSQL's 65,535 parameters per statement. */
const CHUNK = 500;
const chunks = <T>(xs: readonly T[]): T[][] =>
  Array.from({ length: Math.ceil(xs.length / CHUNK) }, (_, i) => xs.slice(i * CHUNK, (i + 1) * CHUNK));

const revisionOf = (r: Pick<Selectable<WebhookDeliveriesTable>, 'revision'>) => BigInt(r.revision);

/**
 * The events whose batch may put an attempt on the timeline (the table below): only a batch with one of them can give
 * the delivery worker anything new to claim (docs/webhooks.md#how-deliveries-flow).
 */
export const PUTS_DUE_ATTEMPTS: ReadonlySet<string> = new Set<WebhookDeliveryEvent['type']>([
  'WebhookDeliveryScheduled',
  'WebhookAttemptFailed',
  'WebhookDeliveryRetryRequested',
]);

/**
 * How this projector's batches name a delivery scheduled with its first attempt already claimed (handed to a worker,
 * docs/webhooks.md#the-first-attempt-handed-over): its timeline row is not for any worker to claim, so it is not one
 * of `PUTS_DUE_ATTEMPTS`, and a batch of only such deliveries does not wake the delivery worker.
 */
export const SCHEDULED_CLAIMED = 'WebhookDeliveryScheduled(claimed)';

/**
 * Applies events (in log order) to the delivery log and the retry timeline: reads the deliveries concerned once,
 * applies every event to them in memory, and writes the changed rows back in a few statements. The rules per
 * event are those of the table below; a row's revision guards replays (an event at or below it changes nothing,
 * and a delivery is scheduled only once).
 *
 * | event | delivery row | attempt row | timeline row |
 * |---|---|---|---|
 * | WebhookDeliveryScheduled | created, `pending` | | created, attempt 1 due at once, claimed when it was handed over (not for test sends) |
 * | WebhookAttemptSucceeded/Failed | the attempt's outcome, `attempt_count` | created | a failed attempt with a next try moves it to that try, unclaimed |
 * | WebhookDeliverySucceeded/Failed | `success`/`failed`, finished | | removed |
 * | WebhookDeliveryRetryRequested | `pending` again, not finished | | put: the requested attempt due at once |
 */
async function applyDeliveries(
  db: Kysely<ReadDb>,
  events: readonly RecordedEvent<WebhookDeliveryEvent>[],
  kept?: KeptRows<Row>,
): Promise<void> {
  const ids = [...new Set(events.map((e) => e.data.deliveryId))];
  const stored = new Map<string, Row>();
  // a delivery an earlier batch of this process wrote, and has not finished, is kept as written: not read again
  const unkept = ids.filter((id) => {
    const row = kept?.get(id);
    if (row) stored.set(id, row);
    return !row;
  });
  for (const part of chunks(unkept))
    for (const r of await db.selectFrom('webhook_deliveries').selectAll().where('delivery_id', 'in', part).execute())
      stored.set(r.delivery_id, r);

  const rows = new Map<string, Row>(); // the rows this batch changed, as they end
  const attempts: Attempt[] = [];
  const due = new Map<string, DueChange>();
  for (const e of events) {
    const d = e.data;
    const revision = rowRevision(e);
    const current = rows.get(d.deliveryId) ?? stored.get(d.deliveryId);
    if (e.type === 'WebhookDeliveryScheduled') {
      if (current) continue; // scheduled once
      const s = e.data;
      rows.set(s.deliveryId, {
        delivery_id: s.deliveryId,
        account_id: s.accountId,
        webhook_id: s.webhookId,
        webhook_agent_id: s.webhookAgentId,
        agent_id: s.agentId,
        event_type: s.eventType,
        channel: s.channel,
        message_id: s.messageId,
        source_event_id: s.sourceEventId,
        test: s.test,
        status: 'pending',
        http_status: null,
        error_message: null,
        response_body: null,
        attempt_count: 0,
        last_attempt_at: null,
        next_retry_at: s.firstAttemptAt,
        created_at: s.scheduledAt,
        finished_at: null,
        revision,
      });
      if (!s.test)
        due.set(s.deliveryId, {
          op: 'insert',
          row: {
            delivery_id: s.deliveryId,
            account_id: s.accountId,
            attempt: 1,
            due_at: s.firstAttemptAt,
            // taken at scheduling by the scheduling process's worker (docs/webhooks.md#the-first-attempt-handed-over)
            claimed_by: s.firstAttemptClaim?.by ?? null,
            claimed_until: s.firstAttemptClaim?.until ?? null,
            revision,
          },
        });
      continue;
    }
    if (!current || revisionOf(current) >= BigInt(revision)) continue; // not scheduled here, or already applied
    switch (e.type) {
      case 'WebhookAttemptSucceeded':
      case 'WebhookAttemptFailed': {
        const a = e.data;
        const failed = e.type === 'WebhookAttemptFailed' ? e.data : null;
        rows.set(a.deliveryId, {
          ...current,
          http_status: a.httpStatus,
          error_message: failed?.errorMessage ?? null,
          response_body: a.responseBody,
          attempt_count: a.attempt,
          last_attempt_at: a.attemptedAt,
          next_retry_at: failed?.nextAttemptAt ?? null,
          revision,
        });
        attempts.push({
          delivery_id: a.deliveryId,
          attempt: a.attempt,
          account_id: a.accountId,
          status: failed ? 'failed' : 'success',
          http_status: a.httpStatus,
          error_message: failed?.errorMessage ?? null,
          response_body: a.responseBody,
          duration_ms: a.durationMs,
          attempted_at: a.attemptedAt,
          next_retry_at: failed?.nextAttemptAt ?? null,
        });
        if (failed?.nextAttemptAt) {
          const before = due.get(a.deliveryId);
          const next = { attempt: a.attempt + 1, dueAt: failed.nextAttemptAt, revision };
          // a timeline row put in this same batch is put at its latest due attempt
          if (before?.op === 'insert' || before?.op === 'upsert')
            due.set(a.deliveryId, {
              op: before.op,
              row: { ...before.row, attempt: next.attempt, due_at: next.dueAt, claimed_by: null, claimed_until: null, revision },
            });
          else if (before?.op !== 'delete') due.set(a.deliveryId, { op: 'update', ...next });
        }
        break;
      }
      case 'WebhookDeliverySucceeded':
        rows.set(d.deliveryId, { ...current, status: 'success', next_retry_at: null, finished_at: e.data.deliveredAt, revision });
        finish(due, d.deliveryId);
        break;
      case 'WebhookDeliveryFailed': {
        const f = e.data;
        const abandoned = f.reason === 'webhook_deleted' || f.reason === 'webhook_disabled';
        rows.set(f.deliveryId, {
          ...current,
          status: 'failed',
          next_retry_at: null,
          finished_at: f.failedAt,
          revision,
          ...(abandoned
            ? { error_message: f.reason === 'webhook_deleted' ? 'webhook deleted before delivery' : 'webhook disabled before delivery' }
            : {}),
        });
        finish(due, f.deliveryId);
        break;
      }
      case 'WebhookDeliveryRetryRequested': {
        // sent again: pending once more, with one attempt due at once (docs/webhooks.md#sending-a-delivery-again)
        const r = e.data;
        rows.set(r.deliveryId, { ...current, status: 'pending', next_retry_at: r.requestedAt, finished_at: null, revision });
        due.set(r.deliveryId, {
          op: 'upsert',
          row: {
            delivery_id: r.deliveryId,
            account_id: r.accountId,
            attempt: r.attempt,
            due_at: r.requestedAt,
            claimed_by: null,
            claimed_until: null,
            revision,
          },
        });
        break;
      }
    }
  }
  await write(db, [...rows.values()], attempts, due);
  // kept once the batch commits: the pending deliveries, whose attempts' outcomes come next; a finished one is forgotten
  if (kept) for (const [id, row] of rows) kept.stage(id, row.finished_at === null ? row : null);
}

/** A finished delivery leaves the timeline; one that was created in this batch is simply never written. */
function finish(due: Map<string, DueChange>, deliveryId: string): void {
  if (due.get(deliveryId)?.op === 'insert') due.delete(deliveryId);
  else due.set(deliveryId, { op: 'delete' });
}

async function write(
  db: Kysely<ReadDb>,
  rows: readonly Row[],
  attempts: readonly Attempt[],
  due: ReadonlyMap<string, DueChange>,
): Promise<void> {
  for (const part of chunks(rows))
    await db
      .insertInto('webhook_deliveries')
      .values(part)
      .onConflict((oc) =>
        oc.column('delivery_id').doUpdateSet((eb) => ({
          status: eb.ref('excluded.status'),
          http_status: eb.ref('excluded.http_status'),
          error_message: eb.ref('excluded.error_message'),
          response_body: eb.ref('excluded.response_body'),
          attempt_count: eb.ref('excluded.attempt_count'),
          last_attempt_at: eb.ref('excluded.last_attempt_at'),
          next_retry_at: eb.ref('excluded.next_retry_at'),
          finished_at: eb.ref('excluded.finished_at'),
          revision: eb.ref('excluded.revision'),
        })),
      )
      .execute();
  for (const part of chunks(attempts))
    await db
      .insertInto('webhook_delivery_attempts')
      .values(part)
      .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
      .execute();

  const changes = [...due.entries()];
  const inserts = changes.flatMap(([, c]) => (c.op === 'insert' ? [c.row] : []));
  for (const part of chunks(inserts))
    await db
      .insertInto('webhook_due_attempts')
      .values(part)
      .onConflict((oc) => oc.column('delivery_id').doNothing())
      .execute();
  const upserts = changes.flatMap(([, c]) => (c.op === 'upsert' ? [c.row] : []));
  for (const part of chunks(upserts))
    await db
      .insertInto('webhook_due_attempts')
      .values(part)
      .onConflict((oc) =>
        oc.column('delivery_id').doUpdateSet((eb) => ({
          attempt: eb.ref('excluded.attempt'),
          due_at: eb.ref('excluded.due_at'),
          claimed_by: null,
          claimed_until: null,
          revision: eb.ref('excluded.revision'),
        })),
      )
      .execute();
  // workers own only the claim columns; a new due attempt clears them (one statement per retry: retries are
  // the rare path, and the query builder keeps the statement in the projector's schema during a rebuild)
  for (const [id, c] of changes)
    if (c.op === 'update')
      await db
        .updateTable('webhook_due_attempts')
        .set({ attempt: c.attempt, due_at: c.dueAt, claimed_by: null, claimed_until: null, revision: c.revision })
        .where('delivery_id', '=', id)
        .execute();
  const deletes = changes.flatMap(([id, c]) => (c.op === 'delete' ? [id] : []));
  for (const part of chunks(deletes)) await db.deleteFrom('webhook_due_attempts').where('delivery_id', 'in', part).execute();
}

/**
 * The delivery log (one row per delivery, one per attempt) and the retry timeline (`webhook_due_attempts`:
 * one row per pending delivery, the attempt due next and when). Test deliveries never enter the timeline (they
 * are sent synchronously). Workers own only the claim columns of the timeline; a new due attempt clears them.
 * A batch is applied set-based (`applyDeliveries`); a single event is the batch of one.
 */
export const webhookDeliveriesProjector = defineProjector<WebhookDeliveryEvent, Row>({
  name: 'webhook_deliveries_v1',
  tables: ['webhook_deliveries', 'webhook_delivery_attempts', 'webhook_due_attempts'],
  // its batches read before they write (docs/event-store.md#pipelined-batches)
  pipelined: true,
  // the deliveries it wrote and that are not finished, so that an attempt's outcome does not read its delivery back
  // (docs/event-store.md#kept-rows)
  keepsRows: { maxEntries: KEPT_DELIVERIES },
  // the decider never claims a test delivery's attempt (it has no timeline row)
  tells: (e) => (e.type === 'WebhookDeliveryScheduled' && e.data.firstAttemptClaim ? SCHEDULED_CLAIMED : e.type),
  on: {
    WebhookDeliveryScheduled: (db, e) => applyDeliveries(db, [e]),
    WebhookAttemptSucceeded: (db, e) => applyDeliveries(db, [e]),
    WebhookAttemptFailed: (db, e) => applyDeliveries(db, [e]),
    WebhookDeliverySucceeded: (db, e) => applyDeliveries(db, [e]),
    WebhookDeliveryFailed: (db, e) => applyDeliveries(db, [e]),
    WebhookDeliveryRetryRequested: (db, e) => applyDeliveries(db, [e]),
  },
  batch: applyDeliveries,
});

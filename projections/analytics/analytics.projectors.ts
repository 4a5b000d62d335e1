import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { AccountEvent } from '../../domain/account/account.decider.js';
import { countsAsUsage } from '../../domain/analytics/counting.js';
import type { CallEvent } from '../../domain/call/call.decider.js';
import type { ConversationEvent } from '../../domain/conversation/conversation.decider.js';
import type { MessageEvent } from '../../domain/message/message.decider.js';
import { LOOKUP_PRICE_MICROS } from '../../domain/phone-number/pricing.js';
import type { WebhookDeliveryEvent } from '../../domain/webhook/webhook-delivery.decider.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';
import { insertNew, RowFold } from '../shared/row-fold.js';
import type { AnalyticsCallsTable, AnalyticsMessagesTable, AnalyticsWebhookDeliveriesTable } from './tables.js';
import './tables.js';
import { guardedRow } from '../shared/guarded.js';

/**
 * The analytics projectors (docs/analytics.md). Each keeps one row per thing counted (a message, a call, an
 * agent turn, a delivery, an attempt, a charge) and writes it with ONE guarded statement per event: an insert
 * that does nothing when the row exists, or an update that applies only while the row reflects an older
 * revision of its stream. So replaying an event changes nothing, whatever the engine's delivery guarantee, and
 * `rebuild` gives equal tables. Sums, rates and percentiles are computed when read (analytics.queries.ts).
 *
 * Those handlers are the rules; the engine applies a batch with each projector's `batch`, which folds the same
 * rules over the batch's rows in memory and writes them back in a few statements (projections/shared/row-fold.ts,
 * docs/analytics.md#batches). test/projections/analytics-batch.spec.ts holds the two to equal tables.
 */

const day = (iso: string) => iso.slice(0, 10);

type MessageStatusEvent = Extract<MessageEvent, { type: 'MessageSubmitted' | 'MessageDelivered' | 'MessageRead' | 'MessageFailed' }>;

/** The message's row, guarded by the revision of the message's own stream. */
const messageRow = guardedRow(
  (db) => db.updateTable('analytics_messages'),
  (e: RecordedEvent<MessageStatusEvent>) => ({ message_id: e.data.messageId }),
);

type MessageFacts = Extract<ConversationEvent, { type: 'OutboundMessageAccepted' | 'InboundMessageReceived' }> | MessageStatusEvent;

/** Messages: recorded on their conversation (direction, channel, counted), then moved by their own stream's outcome. */
export const analyticsMessagesProjector = defineProjector<MessageFacts>({
  name: 'analytics_messages_v1',
  lags: true,
  // its batches read before they write (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['analytics_messages'],
  batch: messagesBatch,
  on: {
    async OutboundMessageAccepted(db, e) {
      await db
        .insertInto('analytics_messages')
        .values(newMessageRow(e))
        .onConflict((oc) => oc.column('message_id').doNothing())
        .execute();
    },
    async InboundMessageReceived(db, e) {
      await db
        .insertInto('analytics_messages')
        .values(newMessageRow(e))
        .onConflict((oc) => oc.column('message_id').doNothing())
        .execute();
    },
    MessageSubmitted: (db, e) => messageRow(db, e, { status: 'sent' }),
    MessageDelivered: (db, e) => messageRow(db, e, { status: 'delivered' }),
    MessageRead: (db, e) => messageRow(db, e, { status: 'read' }),
    MessageFailed: (db, e) => messageRow(db, e, { status: 'failed', failure_category: e.data.failureCategory }),
  },
});

type Fold<T> = T & { revision: string };

type MessageCreated = Extract<MessageFacts, { type: 'OutboundMessageAccepted' | 'InboundMessageReceived' }>;
/** A message's row as its conversation records it. */
const newMessageRow = (e: RecordedEvent<MessageCreated>): Fold<AnalyticsMessagesTable> => {
  const d = e.data;
  const outbound = e.type === 'OutboundMessageAccepted';
  const at = e.type === 'OutboundMessageAccepted' ? e.data.acceptedAt : e.data.receivedAt;
  return {
    message_id: d.messageId,
    account_id: e.metadata.accountId,
    day: day(at),
    at,
    number_id: d.numberId,
    agent_id: d.agentId,
    direction: outbound ? 'outbound' : 'inbound',
    channel: d.channel,
    counted: countsAsUsage(d.channel),
    segments: d.segments ?? 0, // a chat-app message has no segments
    status: outbound ? 'accepted' : 'received',
    failure_category: null,
    revision: '-1',
  };
};

async function messagesBatch(db: Kysely<ReadDb>, events: readonly RecordedEvent<MessageFacts>[]): Promise<void> {
  const rows = new RowFold<Fold<AnalyticsMessagesTable>>('analytics_messages', 'message_id', ['status', 'failure_category']);
  await rows.load(
    db,
    events.map((e) => e.data.messageId),
  );
  for (const e of events) {
    const revision = rowRevision(e);
    switch (e.type) {
      case 'OutboundMessageAccepted':
      case 'InboundMessageReceived':
        rows.create(newMessageRow(e));
        break;
      case 'MessageSubmitted':
        rows.move(e.data.messageId, revision, { status: 'sent' });
        break;
      case 'MessageDelivered':
        rows.move(e.data.messageId, revision, { status: 'delivered' });
        break;
      case 'MessageRead':
        rows.move(e.data.messageId, revision, { status: 'read' });
        break;
      case 'MessageFailed':
        rows.move(e.data.messageId, revision, { status: 'failed', failure_category: e.data.failureCategory });
        break;
    }
  }
  await rows.write(db);
}

type CallEnd = Extract<CallEvent, { type: 'CallEnded' | 'CallFailed' }>;
const callRow = guardedRow(
  (db) => db.updateTable('analytics_calls'),
  (e: RecordedEvent<CallEnd>) => ({ call_id: e.data.callId }),
);

/** Calls (placed or answered, then how they ended) and the latency of every agent turn that measured one. */
type CallFacts = Extract<CallEvent, { type: 'CallPlaced' | 'AgentTurnRecorded' }> | CallEnd;

/** Total latency of a turn that measured every part, else null. */
const totalMs = (l: { requestMs: number | null; firstByteMs: number | null; speechStartMs: number | null }) =>
  l.requestMs !== null && l.firstByteMs !== null && l.speechStartMs !== null ? l.requestMs + l.firstByteMs + l.speechStartMs : null;

/** A call's row as its placing records it. */
const newCallRow = (e: RecordedEvent<Extract<CallFacts, { type: 'CallPlaced' }>>): Fold<AnalyticsCallsTable> => {
  const d = e.data;
  return {
    call_id: d.callId,
    account_id: d.accountId,
    day: day(d.placedAt),
    started_at: d.placedAt,
    number_id: d.numberId,
    agent_id: d.agentId,
    direction: d.direction,
    status: 'in-progress',
    reason: null,
    duration_seconds: 0,
    revision: rowRevision(e),
  };
};

async function callsBatch(db: Kysely<ReadDb>, events: readonly RecordedEvent<CallFacts>[]): Promise<void> {
  const calls = new RowFold<Fold<AnalyticsCallsTable>>('analytics_calls', 'call_id', ['status', 'reason', 'duration_seconds']);
  await calls.load(
    db,
    events.map((e) => e.data.callId),
  );
  const turns: Record<string, unknown>[] = [];
  for (const e of events) {
    const revision = rowRevision(e);
    switch (e.type) {
      case 'CallPlaced':
        calls.create(newCallRow(e));
        break;
      case 'CallEnded':
        calls.move(e.data.callId, revision, { status: 'completed', reason: e.data.reason, duration_seconds: e.data.durationSeconds });
        break;
      case 'CallFailed':
        calls.move(e.data.callId, revision, { status: 'failed', reason: e.data.reason, duration_seconds: 0 });
        break;
      case 'AgentTurnRecorded': {
        const d = e.data;
        const l = d.latency;
        const call = calls.get(d.callId);
        if (!l || !call) break; // nothing measured (the greeting), or a call this projector never saw
        turns.push({
          call_id: d.callId,
          turn_id: d.turnId,
          account_id: call.account_id,
          agent_id: call.agent_id,
          day: day(d.startedAt),
          at: d.startedAt,
          request_ms: l.requestMs,
          first_byte_ms: l.firstByteMs,
          speech_start_ms: l.speechStartMs,
          total_ms: totalMs(l),
        });
        break;
      }
    }
  }
  await calls.write(db);
  await insertNew(db, 'analytics_call_turns', ['call_id', 'turn_id'], turns);
}

export const analyticsCallsProjector = defineProjector<CallFacts>({
  name: 'analytics_calls_v1',
  lags: true,
  // its batches read before they write (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['analytics_calls', 'analytics_call_turns'],
  batch: callsBatch,
  on: {
    async CallPlaced(db, e) {
      await db
        .insertInto('analytics_calls')
        .values(newCallRow(e))
        .onConflict((oc) => oc.column('call_id').doNothing())
        .execute();
    },
    CallEnded: (db, e) => callRow(db, e, { status: 'completed', reason: e.data.reason, duration_seconds: e.data.durationSeconds }),
    CallFailed: (db, e) => callRow(db, e, { status: 'failed', reason: e.data.reason, duration_seconds: 0 }),
    async AgentTurnRecorded(db, e) {
      const d = e.data;
      const l = d.latency;
      if (!l) return; // nothing measured (the greeting)
      const total = totalMs(l);
      // the turn takes its account and agent from its call's row, in the same statement
      await db
        .insertInto('analytics_call_turns')
        .columns([
          'call_id',
          'turn_id',
          'account_id',
          'agent_id',
          'day',
          'at',
          'request_ms',
          'first_byte_ms',
          'speech_start_ms',
          'total_ms',
        ])
        .expression((eb) =>
          eb
            .selectFrom('analytics_calls')
            .select((s) => [
              s.val(d.callId).as('call_id'),
              s.val(d.turnId).as('turn_id'),
              'account_id',
              'agent_id',
              s.val(day(d.startedAt)).as('day'),
              s.val(d.startedAt).as('at'),
              s.val(l.requestMs).as('request_ms'),
              s.val(l.firstByteMs).as('first_byte_ms'),
              s.val(l.speechStartMs).as('speech_start_ms'),
              s.val(total).as('total_ms'),
            ])
            .where('call_id', '=', d.callId),
        )
        .onConflict((oc) => oc.columns(['call_id', 'turn_id']).doNothing())
        .execute();
    },
  },
});

type DeliveryEnd = Extract<
  WebhookDeliveryEvent,
  { type: 'WebhookDeliverySucceeded' | 'WebhookDeliveryFailed' | 'WebhookDeliveryRetryRequested' }
>;
type Attempt = Extract<WebhookDeliveryEvent, { type: 'WebhookAttemptSucceeded' | 'WebhookAttemptFailed' }>;
const deliveryRow = guardedRow(
  (db) => db.updateTable('analytics_webhook_deliveries'),
  (e: RecordedEvent<DeliveryEnd>) => ({ delivery_id: e.data.deliveryId }),
);

async function attempted(db: Kysely<ReadDb>, e: RecordedEvent<Attempt>): Promise<void> {
  const d = e.data;
  // the attempt takes its webhook from its delivery's row, in the same statement
  await db
    .insertInto('analytics_webhook_attempts')
    .columns(['delivery_id', 'attempt', 'account_id', 'webhook_id', 'day', 'attempted_at', 'ok', 'http_status', 'duration_ms'])
    .expression((eb) =>
      eb
        .selectFrom('analytics_webhook_deliveries')
        .select((s) => [
          s.val(d.deliveryId).as('delivery_id'),
          s.val(d.attempt).as('attempt'),
          'account_id',
          'webhook_id',
          s.val(day(d.attemptedAt)).as('day'),
          s.val(d.attemptedAt).as('attempted_at'),
          s.val(e.type === 'WebhookAttemptSucceeded').as('ok'),
          s.val(d.httpStatus).as('http_status'),
          s.val(d.durationMs).as('duration_ms'),
        ])
        .where('delivery_id', '=', d.deliveryId),
    )
    .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
    .execute();
}

type DeliveryFacts = Extract<WebhookDeliveryEvent, { type: 'WebhookDeliveryScheduled' }> | DeliveryEnd | Attempt;

/** A delivery's row as its scheduling records it. */
const newDeliveryRow = (
  e: RecordedEvent<Extract<DeliveryFacts, { type: 'WebhookDeliveryScheduled' }>>,
): Fold<AnalyticsWebhookDeliveriesTable> => {
  const d = e.data;
  return {
    delivery_id: d.deliveryId,
    account_id: d.accountId,
    webhook_id: d.webhookId,
    day: day(d.scheduledAt),
    created_at: d.scheduledAt,
    event_type: d.eventType,
    test: d.test,
    status: 'pending',
    attempts: 0,
    revision: rowRevision(e),
  };
};

async function webhooksBatch(db: Kysely<ReadDb>, events: readonly RecordedEvent<DeliveryFacts>[]): Promise<void> {
  const deliveries = new RowFold<Fold<AnalyticsWebhookDeliveriesTable>>('analytics_webhook_deliveries', 'delivery_id', [
    'status',
    'attempts',
  ]);
  await deliveries.load(
    db,
    events.map((e) => e.data.deliveryId),
  );
  const attempts: Record<string, unknown>[] = [];
  for (const e of events) {
    const revision = rowRevision(e);
    switch (e.type) {
      case 'WebhookDeliveryScheduled':
        deliveries.create(newDeliveryRow(e));
        break;
      case 'WebhookAttemptSucceeded':
      case 'WebhookAttemptFailed': {
        const d = e.data;
        const delivery = deliveries.get(d.deliveryId);
        if (!delivery) break;
        attempts.push({
          delivery_id: d.deliveryId,
          attempt: d.attempt,
          account_id: delivery.account_id,
          webhook_id: delivery.webhook_id,
          day: day(d.attemptedAt),
          attempted_at: d.attemptedAt,
          ok: e.type === 'WebhookAttemptSucceeded',
          http_status: d.httpStatus,
          duration_ms: d.durationMs,
        });
        break;
      }
      case 'WebhookDeliverySucceeded':
        deliveries.move(e.data.deliveryId, revision, { status: 'success', attempts: e.data.attempts });
        break;
      case 'WebhookDeliveryFailed':
        deliveries.move(e.data.deliveryId, revision, { status: 'failed', attempts: e.data.attempts });
        break;
      case 'WebhookDeliveryRetryRequested':
        deliveries.move(e.data.deliveryId, revision, { status: 'pending' });
        break;
    }
  }
  await deliveries.write(db);
  await insertNew(db, 'analytics_webhook_attempts', ['delivery_id', 'attempt'], attempts);
}

/** Webhook deliveries (scheduled day, latest outcome) and every attempt with its duration. */
export const analyticsWebhooksProjector = defineProjector<DeliveryFacts>({
  name: 'analytics_webhooks_v1',
  lags: true,
  // its batches read before they write (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['analytics_webhook_deliveries', 'analytics_webhook_attempts'],
  batch: webhooksBatch,
  on: {
    async WebhookDeliveryScheduled(db, e) {
      await db
        .insertInto('analytics_webhook_deliveries')
        .values(newDeliveryRow(e))
        .onConflict((oc) => oc.column('delivery_id').doNothing())
        .execute();
    },
    WebhookAttemptSucceeded: attempted,
    WebhookAttemptFailed: attempted,
    WebhookDeliverySucceeded: (db, e) => deliveryRow(db, e, { status: 'success', attempts: e.data.attempts }),
    WebhookDeliveryFailed: (db, e) => deliveryRow(db, e, { status: 'failed', attempts: e.data.attempts }),
    WebhookDeliveryRetryRequested: (db, e) => deliveryRow(db, e, { status: 'pending' }),
  },
});

/** Money spent: every charge of the paying account, with what it bought (numbers looked up for a lookup). */
type Charged = Extract<AccountEvent, { type: 'AccountCharged' }>;
const chargeRow = (e: RecordedEvent<Charged>) => {
  const d = e.data;
  return {
    charge_id: d.chargeId,
    account_id: d.accountId,
    day: day(d.chargedAt),
    at: d.chargedAt,
    kind: d.kind,
    amount_micros: String(d.amountMicros),
    quantity: d.kind === 'number_lookup' ? Math.round(d.amountMicros / LOOKUP_PRICE_MICROS) : 1,
  };
};

export const analyticsSpendProjector = defineProjector<Charged>({
  name: 'analytics_spend_v1',
  lags: true,
  // its batches read before they write (docs/event-store.md#pipelined-batches)
  pipelined: true,
  tables: ['analytics_charges'],
  batch: (db, events) => insertNew(db, 'analytics_charges', ['charge_id'], events.map(chargeRow)),
  on: {
    async AccountCharged(db, e) {
      await db
        .insertInto('analytics_charges')
        .values(chargeRow(e))
        .onConflict((oc) => oc.column('charge_id').doNothing())
        .execute();
    },
  },
});

export const analyticsProjectors = [
  analyticsMessagesProjector,
  analyticsCallsProjector,
  analyticsWebhooksProjector,
  analyticsSpendProjector,
];

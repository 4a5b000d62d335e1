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
import './tables.js';

/**
 * The analytics projectors (docs/analytics.md). Each keeps one row per thing counted (a message, a call, an
 * agent turn, a delivery, an attempt, a charge) and writes it with ONE guarded statement per event: an insert
 * that does nothing when the row exists, or an update that applies only while the row reflects an older
 * revision of its stream. So replaying an event changes nothing, whatever the engine's delivery guarantee, and
 * `rebuild` gives equal tables. Sums, rates and percentiles are computed when read (analytics.queries.ts).
 */

const day = (iso: string) => iso.slice(0, 10);

type MessageStatusEvent = Extract<MessageEvent, { type: 'MessageSubmitted' | 'MessageDelivered' | 'MessageRead' | 'MessageFailed' }>;

/** The message's row, guarded by the revision of the message's own stream. */
const messageRow = (db: Kysely<ReadDb>, e: RecordedEvent<MessageStatusEvent>) =>
  db.updateTable('analytics_messages').where('message_id', '=', e.data.messageId).where('revision', '<', rowRevision(e));

/** Messages: recorded on their conversation (direction, channel, counted), then moved by their own stream's outcome. */
export const analyticsMessagesProjector = defineProjector<
  Extract<ConversationEvent, { type: 'OutboundMessageAccepted' | 'InboundMessageReceived' }> | MessageStatusEvent
>({
  name: 'analytics_messages_v1',
  tables: ['analytics_messages'],
  on: {
    async OutboundMessageAccepted(db, e) {
      const d = e.data;
      await db
        .insertInto('analytics_messages')
        .values({
          message_id: d.messageId,
          account_id: e.metadata.accountId,
          day: day(d.acceptedAt),
          at: d.acceptedAt,
          number_id: d.numberId,
          agent_id: d.agentId,
          direction: 'outbound',
          channel: d.channel,
          counted: countsAsUsage(d.channel),
          segments: d.segments ?? 0, // a chat-app message has no segments
          status: 'accepted',
          failure_category: null,
          revision: '-1',
        })
        .onConflict((oc) => oc.column('message_id').doNothing())
        .execute();
    },
    async InboundMessageReceived(db, e) {
      const d = e.data;
      await db
        .insertInto('analytics_messages')
        .values({
          message_id: d.messageId,
          account_id: e.metadata.accountId,
          day: day(d.receivedAt),
          at: d.receivedAt,
          number_id: d.numberId,
          agent_id: d.agentId,
          direction: 'inbound',
          channel: d.channel,
          counted: countsAsUsage(d.channel),
          segments: d.segments ?? 0, // a chat-app message has no segments
          status: 'received',
          failure_category: null,
          revision: '-1',
        })
        .onConflict((oc) => oc.column('message_id').doNothing())
        .execute();
    },
    async MessageSubmitted(db, e) {
      await messageRow(db, e)
        .set({ status: 'sent', revision: rowRevision(e) })
        .execute();
    },
    async MessageDelivered(db, e) {
      await messageRow(db, e)
        .set({ status: 'delivered', revision: rowRevision(e) })
        .execute();
    },
    async MessageRead(db, e) {
      await messageRow(db, e)
        .set({ status: 'read', revision: rowRevision(e) })
        .execute();
    },
    async MessageFailed(db, e) {
      await messageRow(db, e)
        .set({ status: 'failed', failure_category: e.data.failureCategory, revision: rowRevision(e) })
        .execute();
    },
  },
});

type CallEnd = Extract<CallEvent, { type: 'CallEnded' | 'CallFailed' }>;
const callRow = (db: Kysely<ReadDb>, e: RecordedEvent<CallEnd>) =>
  db.updateTable('analytics_calls').where('call_id', '=', e.data.callId).where('revision', '<', rowRevision(e));

/** Calls (placed or answered, then how they ended) and the latency of every agent turn that measured one. */
export const analyticsCallsProjector = defineProjector<Extract<CallEvent, { type: 'CallPlaced' | 'AgentTurnRecorded' }> | CallEnd>({
  name: 'analytics_calls_v1',
  tables: ['analytics_calls', 'analytics_call_turns'],
  on: {
    async CallPlaced(db, e) {
      const d = e.data;
      await db
        .insertInto('analytics_calls')
        .values({
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
        })
        .onConflict((oc) => oc.column('call_id').doNothing())
        .execute();
    },
    async CallEnded(db, e) {
      await callRow(db, e)
        .set({ status: 'completed', reason: e.data.reason, duration_seconds: e.data.durationSeconds, revision: rowRevision(e) })
        .execute();
    },
    async CallFailed(db, e) {
      await callRow(db, e)
        .set({ status: 'failed', reason: e.data.reason, duration_seconds: 0, revision: rowRevision(e) })
        .execute();
    },
    async AgentTurnRecorded(db, e) {
      const d = e.data;
      const l = d.latency;
      if (!l) return; // nothing measured (the greeting)
      const total =
        l.requestMs !== null && l.firstByteMs !== null && l.speechStartMs !== null ? l.requestMs + l.firstByteMs + l.speechStartMs : null;
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
const deliveryRow = (db: Kysely<ReadDb>, e: RecordedEvent<DeliveryEnd>) =>
  db.updateTable('analytics_webhook_deliveries').where('delivery_id', '=', e.data.deliveryId).where('revision', '<', rowRevision(e));

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

/** Webhook deliveries (scheduled day, latest outcome) and every attempt with its duration. */
export const analyticsWebhooksProjector = defineProjector<
  Extract<WebhookDeliveryEvent, { type: 'WebhookDeliveryScheduled' }> | DeliveryEnd | Attempt
>({
  name: 'analytics_webhooks_v1',
  tables: ['analytics_webhook_deliveries', 'analytics_webhook_attempts'],
  on: {
    async WebhookDeliveryScheduled(db, e) {
      const d = e.data;
      await db
        .insertInto('analytics_webhook_deliveries')
        .values({
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
        })
        .onConflict((oc) => oc.column('delivery_id').doNothing())
        .execute();
    },
    WebhookAttemptSucceeded: attempted,
    WebhookAttemptFailed: attempted,
    async WebhookDeliverySucceeded(db, e) {
      await deliveryRow(db, e)
        .set({ status: 'success', attempts: e.data.attempts, revision: rowRevision(e) })
        .execute();
    },
    async WebhookDeliveryFailed(db, e) {
      await deliveryRow(db, e)
        .set({ status: 'failed', attempts: e.data.attempts, revision: rowRevision(e) })
        .execute();
    },
    async WebhookDeliveryRetryRequested(db, e) {
      await deliveryRow(db, e)
        .set({ status: 'pending', revision: rowRevision(e) })
        .execute();
    },
  },
});

/** Money spent: every charge of the paying account, with what it bought (numbers looked up for a lookup). */
export const analyticsSpendProjector = defineProjector<Extract<AccountEvent, { type: 'AccountCharged' }>>({
  name: 'analytics_spend_v1',
  tables: ['analytics_charges'],
  on: {
    async AccountCharged(db, e) {
      const d = e.data;
      await db
        .insertInto('analytics_charges')
        .values({
          charge_id: d.chargeId,
          account_id: d.accountId,
          day: day(d.chargedAt),
          at: d.chargedAt,
          kind: d.kind,
          amount_micros: String(d.amountMicros),
          quantity: d.kind === 'number_lookup' ? Math.round(d.amountMicros / LOOKUP_PRICE_MICROS) : 1,
        })
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

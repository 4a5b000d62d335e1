import { expect } from 'chai';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import { analyticsProjectors } from '../../projections/analytics/analytics.projectors.js';
import { type Draft, draftedLog } from '../support/drafted-log.js';
import { seededRandom } from '../support/fixtures.js';
import { scratchSchemas } from '../support/scratch-schemas.js';

/**
 * Random histories of what the analytics count, each thing's events in its own order (a message is accepted on
 * its conversation and moved on its own stream, possibly before the conversation's event is in the same batch),
 * interleaved as a log holds them; some events name things the log never created.
 */
function history(seed: number): RecordedEvent[] {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  let clock = Date.parse('2026-03-01T22:00:00.000Z');
  const at = () => {
    clock += Math.floor(rnd() * 600_000);
    return new Date(clock).toISOString();
  };
  const things: Draft[][] = [];
  for (let i = 0; i < 30; i++) {
    const accountId = `acc_${i % 3}`;
    const messageId = `msg_${seed}_${i}`;
    const outbound = rnd() < 0.6;
    const channel = pick(['sms', 'sms', 'mms', 'chatapp']);
    const created: Draft = {
      stream: `conversation-c${i % 4}`,
      type: outbound ? 'OutboundMessageAccepted' : 'InboundMessageReceived',
      data: {
        messageId,
        numberId: `num_${i % 2}`,
        agentId: rnd() < 0.8 ? 'agt_1' : null,
        channel,
        segments: channel === 'chatapp' ? null : 1 + Math.floor(rnd() * 3),
        ...(outbound ? { acceptedAt: at() } : { receivedAt: at() }),
      },
      accountId,
    };
    const own = (type: string, data: Record<string, unknown>): Draft => ({
      stream: `message-${messageId}`,
      type,
      data: { messageId, ...data },
      accountId,
    });
    const moves = outbound
      ? [
          own('MessageSubmitted', {}),
          pick([own('MessageDelivered', {}), own('MessageFailed', { failureCategory: 'carrier' })]),
          own('MessageRead', {}),
        ]
      : [];
    things.push(rnd() < 0.1 ? moves : [created, ...moves.slice(0, Math.floor(rnd() * (moves.length + 1)))]);
  }
  for (let i = 0; i < 20; i++) {
    const callId = `call_${seed}_${i}`;
    const accountId = `acc_${i % 3}`;
    const s = (type: string, data: Record<string, unknown>): Draft => ({
      stream: `call-${callId}`,
      type,
      data: { callId, ...data },
      accountId,
    });
    const turn = (k: number) =>
      s('AgentTurnRecorded', {
        turnId: `t${k}`,
        startedAt: at(),
        latency:
          k === 0
            ? null
            : {
                requestMs: 100 + k,
                firstByteMs: rnd() < 0.2 ? null : 50.5,
                speechStartMs: 20 + Math.floor(rnd() * 30),
                recognitionMs: null,
                synthesisMs: null,
              },
      });
    const placed = s('CallPlaced', {
      accountId,
      numberId: rnd() < 0.9 ? `num_${i % 2}` : null,
      agentId: 'agt_1',
      direction: pick(['inbound', 'outbound', 'web']),
      placedAt: at(),
    });
    const turns = Array.from({ length: Math.floor(rnd() * 4) }, (_, k) => turn(k));
    const end = pick([
      s('CallEnded', { reason: 'user_hangup', durationSeconds: Math.floor(rnd() * 300) }),
      s('CallFailed', { reason: 'busy' }),
      null,
    ]);
    things.push([...(rnd() < 0.1 ? [] : [placed]), ...turns, ...(end ? [end] : [])]);
  }
  for (let i = 0; i < 20; i++) {
    const deliveryId = `whd_${seed}_${i}`;
    const accountId = `acc_${i % 3}`;
    const s = (type: string, data: Record<string, unknown>): Draft => ({
      stream: `webhook_delivery-${deliveryId}`,
      type,
      data: { deliveryId, accountId, webhookId: `whk_${i % 2}`, ...data },
      accountId,
    });
    const events: Draft[] = [s('WebhookDeliveryScheduled', { scheduledAt: at(), eventType: 'agent.message', test: rnd() < 0.2 })];
    let attempt = 0;
    for (let round = 0; round < 1 + Math.floor(rnd() * 2); round++) {
      if (round > 0) events.push(s('WebhookDeliveryRetryRequested', { attempt: attempt + 1, requestedAt: at() }));
      const tries = 1 + Math.floor(rnd() * 3);
      for (let k = 0; k < tries; k++) {
        attempt++;
        const ok = k === tries - 1 && rnd() < 0.6;
        events.push(
          s(ok ? 'WebhookAttemptSucceeded' : 'WebhookAttemptFailed', {
            attempt,
            attemptedAt: at(),
            httpStatus: ok ? 200 : pick([500, null]),
            durationMs: Math.floor(rnd() * 900),
          }),
        );
        if (ok) events.push(s('WebhookDeliverySucceeded', { attempts: attempt }));
      }
      if (events.at(-1)!.type !== 'WebhookDeliverySucceeded') events.push(s('WebhookDeliveryFailed', { attempts: attempt }));
    }
    things.push(events.slice(0, 1 + Math.floor(rnd() * events.length)));
  }
  for (let i = 0; i < 10; i++) {
    const kind = pick(['number_lookup', 'number_purchase']);
    things.push([
      {
        stream: `account-acc_${i % 3}`,
        type: 'AccountCharged',
        data: {
          chargeId: `chg_${seed}_${i % 8}`,
          accountId: `acc_${i % 3}`,
          kind,
          amountMicros: kind === 'number_lookup' ? 30_000 : 3_000_000,
          chargedAt: at(),
        },
        accountId: `acc_${i % 3}`,
      },
    ]);
  }

  const { log, push } = draftedLog();
  const queues = things.filter((q) => q.length > 0);
  while (queues.length > 0) {
    const qi = Math.floor(rnd() * queues.length);
    const d = queues[qi]!.shift()!;
    if (queues[qi]!.length === 0) queues.splice(qi, 1);
    push(d, new Date(clock).toISOString());
  }
  return log;
}

const TABLES = [...new Set(analyticsProjectors.flatMap((p) => [...p.tables]))];

/**
 * The analytics projectors' set-based batches (projections/shared/row-fold.ts) against their own
 * one-statement-per-event handlers, which state the rules: random histories, cut into random batches, some applied
 * twice (a replay), must leave exactly the tables the handlers leave event by event.
 */
describe('analytics projectors: set-based batches equal one statement per event', function () {
  this.timeout(120_000);
  let scratch: Awaited<ReturnType<typeof scratchSchemas>>;
  before(async () => {
    scratch = await scratchSchemas(['oracle_a', 'batch_a'], TABLES);
  });
  after(() => scratch.close());

  for (const seed of [1, 2, 3, 4]) {
    it(`history ${seed}: messages, calls, deliveries and charges in random batches with replays`, async () => {
      const log = history(seed);
      const rnd = seededRandom(seed * 104_729);
      await scratch.fresh();
      const { db } = scratch;
      const oracle = db.withSchema('oracle_a');
      for (const e of log) for (const p of analyticsProjectors) await p.apply(oracle, e);

      for (let i = 0; i < log.length; ) {
        const n = 1 + Math.floor(rnd() * 40);
        const batch = log.slice(i, i + n);
        await db.transaction().execute(async (trx) => {
          for (const p of analyticsProjectors) await p.applyBatch(trx.withSchema('batch_a'), batch);
        });
        if (rnd() < 0.2) for (const p of analyticsProjectors) await p.applyBatch(db.withSchema('batch_a'), batch); // a replay changes nothing
        i += n;
      }
      const expected = await scratch.dump('oracle_a');
      expect(expected.analytics_messages!.length, 'messages').to.be.greaterThan(15);
      expect(expected.analytics_call_turns!.length, 'turns').to.be.greaterThan(5);
      expect(expected.analytics_webhook_attempts!.length, 'attempts').to.be.greaterThan(10);
      expect(await scratch.dump('batch_a')).to.deep.equal(expected);
    });
  }
});

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { KyselyPlugin } from 'kysely';
import { makeCheckpoint, type RecordedEvent } from '../../application/ports/event-store.port.js';
import {
  type AttemptResult,
  type WebhookDeliveryCommand,
  type WebhookDeliveryEvent,
  webhookDeliveryDecider,
} from '../../domain/webhook/webhook-delivery.decider.js';
import { KeptRows } from '../../projections/shared/kept-rows.js';
import { webhookDeliveriesProjector } from '../../projections/webhooks/webhook-deliveries.projector.js';
import { seededRandom } from '../support/fixtures.js';
import { scratchSchemas } from '../support/scratch-schemas.js';
import { oneStatementPerEvent } from './webhook-deliveries-oracle.js';

/** Delivery histories as the decider writes them, interleaved across deliveries as a log would hold them. */
function histories(seed: number, deliveries: number): RecordedEvent<WebhookDeliveryEvent>[] {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  let clock = Date.parse('2026-03-01T10:00:00.000Z');
  const now = () => {
    clock += 1000 + Math.floor(rnd() * 60_000);
    return new Date(clock).toISOString();
  };
  const perDelivery = Array.from({ length: deliveries }, (_, i) => {
    const deliveryId = `whd_${seed}_${i}`;
    const accountId = `acc_${i % 3}`;
    let state = webhookDeliveryDecider.initialState();
    const out: WebhookDeliveryEvent[] = [];
    const run = (c: Omit<WebhookDeliveryCommand, 'metadata'>) => {
      const events = webhookDeliveryDecider.decide({ ...c, metadata: { now: now(), accountId } } as WebhookDeliveryCommand, state);
      state = events.reduce(webhookDeliveryDecider.evolve, state);
      out.push(...events);
    };
    run({
      type: 'ScheduleDelivery',
      data: {
        deliveryId,
        test: rnd() < 0.15,
        webhookId: `whk_${i % 2}`,
        webhookAgentId: rnd() < 0.5 ? null : 'agt_1',
        eventType: 'agent.message',
        channel: pick(['sms', null]),
        agentId: 'agt_1',
        messageId: `msg_${i}`,
        sourceEventId: randomUUID(),
        sourceEventType: 'MessageReceived',
        body: `{"n":${i}}`,
        // some first attempts handed to a worker at scheduling (docs/webhooks.md#the-first-attempt-handed-over)
        ...(rnd() < 0.5 ? { firstAttemptClaim: { by: 'wrk_1', until: new Date(clock + 150_000).toISOString() } } : {}),
      },
    });
    const fail = (): AttemptResult => ({
      ok: false,
      httpStatus: pick([500, 503, null]),
      errorMessage: pick(['HTTP 500', 'ECONNREFUSED: connect']),
      responseBody: pick([null, 'oops']),
      durationMs: Math.floor(rnd() * 900),
      retryAfterS: null,
    });
    let attempt = 1;
    const attemptsWhilePending = () => {
      for (; state.status === 'pending' && rnd() < 0.85; attempt++) {
        if (rnd() < 0.05) {
          run({ type: 'AbandonDelivery', data: { deliveryId, reason: pick(['webhook_deleted', 'webhook_disabled'] as const) } });
          break;
        }
        const result: AttemptResult =
          rnd() < 0.4 ? { ok: true, httpStatus: 200, responseBody: pick([null, 'ok']), durationMs: Math.floor(rnd() * 300) } : fail();
        run({ type: 'RecordAttempt', data: { deliveryId, attempt, result } });
      }
    };
    attemptsWhilePending();
    // a finished delivery sent again (retry or recover), sometimes more than once
    while (state.status !== 'pending' && state.status !== 'none' && rnd() < 0.3) {
      run({ type: 'RetryDelivery', data: { deliveryId, source: pick(['retry', 'recover'] as const) } });
      const now = state as { status: string; attempts?: number }; // moved by run()
      if (now.status === 'pending') attempt = (now.attempts ?? 0) + 1;
      attemptsWhilePending();
    }
    return out.map((e, revision) => ({ e, deliveryId, accountId, revision }));
  });
  // interleave, keeping each delivery's order
  const log: RecordedEvent<WebhookDeliveryEvent>[] = [];
  const queues = perDelivery.filter((q) => q.length > 0);
  while (queues.length > 0) {
    const qi = Math.floor(rnd() * queues.length);
    const { e, deliveryId, accountId, revision } = queues[qi]!.shift()!;
    if (queues[qi]!.length === 0) queues.splice(qi, 1);
    const position = BigInt(log.length + 1);
    log.push({
      ...e,
      id: randomUUID(),
      metadata: { accountId, correlationId: 'c', causationId: null, requestId: null, actor: 'system:test' },
      streamName: `webhook_delivery-${deliveryId}`,
      streamRevision: BigInt(revision),
      globalPosition: position,
      checkpoint: makeCheckpoint(1000n + position, position),
      createdAt: new Date(clock).toISOString(),
    } as RecordedEvent<WebhookDeliveryEvent>);
  }
  return log;
}

const TABLES = ['webhook_deliveries', 'webhook_delivery_attempts', 'webhook_due_attempts'] as const;

/**
 * The delivery log's set-based batches (projections/webhook-deliveries.projector.ts) against the oracle: the same
 * projector as it was with one guarded statement per event. Random histories from the decider itself, cut into
 * random batches, some applied twice (a replay), must leave exactly the oracle's tables.
 */
describe('webhook delivery log: set-based batches equal one statement per event', function () {
  this.timeout(120_000);
  let scratch: Awaited<ReturnType<typeof scratchSchemas>>;
  before(async () => {
    scratch = await scratchSchemas(['oracle_t', 'batch_t', 'read_t'], TABLES);
  });
  after(() => scratch.close());

  for (const seed of [1, 2, 3, 4, 5]) {
    it(`history ${seed}: 40 deliveries, random batches and replays`, async () => {
      const log = histories(seed, 40);
      const rnd = seededRandom(seed * 7919);
      await scratch.fresh();
      const { db } = scratch;
      const oracle = db.withSchema('oracle_t');
      for (const e of log) await oneStatementPerEvent.apply(oracle, e);

      const batched = db.withSchema('batch_t');
      const batches: RecordedEvent<WebhookDeliveryEvent>[][] = [];
      for (let i = 0; i < log.length; ) {
        const n = 1 + Math.floor(rnd() * 25);
        const batch = log.slice(i, i + n);
        batches.push(batch);
        await db.transaction().execute((trx) => webhookDeliveriesProjector.applyBatch(trx.withSchema('batch_t'), batch));
        if (rnd() < 0.2) await webhookDeliveriesProjector.applyBatch(batched, batch); // a replay changes nothing
        i += n;
      }
      // nor does a replay long after, when the deliveries it begins have moved on (finished, sent again)
      for (const batch of batches.slice(0, 4)) await webhookDeliveriesProjector.applyBatch(batched, batch);
      expect(log.length).to.be.greaterThan(60);
      const expected = await scratch.dump('oracle_t');
      expect(expected.webhook_deliveries).to.have.length(40);
      const actual = await scratch.dump('batch_t');
      expect(actual).to.deep.equal(expected);
    });
  }

  for (const seed of [6, 7, 8]) {
    it(`history ${seed}: with the rows its batches wrote kept between them, as a live run keeps them: the same tables, fewer reads`, async () => {
      const log = histories(seed, 40);
      const rnd = seededRandom(seed * 7919);
      await scratch.fresh();
      const { db } = scratch;
      for (const e of log) await oneStatementPerEvent.apply(db.withSchema('oracle_t'), e);
      const cuts: RecordedEvent<WebhookDeliveryEvent>[][] = [];
      for (let i = 0; i < log.length; ) {
        const n = 1 + Math.floor(rnd() * 6);
        cuts.push(log.slice(i, i + n));
        i += n;
      }
      const reads = { kept: 0, read: 0 };
      const counting = (into: 'kept' | 'read'): KyselyPlugin => ({
        transformQuery: (a) => {
          if (a.node.kind === 'SelectQueryNode') reads[into]++;
          return a.node;
        },
        transformResult: async (a) => a.result,
      });
      // the same batches without kept rows, in a schema of their own: what each batch reads then
      for (const batch of cuts)
        await db
          .transaction()
          .execute((trx) => webhookDeliveriesProjector.applyBatch(trx.withSchema('read_t').withPlugin(counting('read')), batch));

      const kept = new KeptRows<unknown>({ maxEntries: 15, now: () => 0 });
      kept.held(1);
      for (const [i, batch] of cuts.entries()) {
        const run = (failing: boolean, counted: boolean) =>
          db.transaction().execute(async (trx) => {
            kept.begin();
            const into = trx.withSchema('batch_t');
            await webhookDeliveriesProjector.applyBatch(counted ? into.withPlugin(counting('kept')) : into, batch, kept);
            if (failing) throw new Error('the batch fails after its writes');
          });
        // now and then a batch fails (rolled back: nothing of it is kept, and what was kept is forgotten) and runs again
        if (rnd() < 0.1) await run(true, false).catch(() => kept.failed());
        await run(false, true);
        kept.committed();
        // a replay of a batch changes nothing, kept rows or not
        if (i > 3 && rnd() < 0.2) {
          await run(false, false);
          kept.committed();
        }
      }
      const expected = await scratch.dump('oracle_t');
      expect(expected.webhook_deliveries).to.have.length(40);
      expect(await scratch.dump('batch_t')).to.deep.equal(expected);
      expect(reads.kept).to.be.lessThan(reads.read);
    });
  }
});

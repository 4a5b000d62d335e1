/**
 * Three figures of bench:eventstore (docs/testing.md#event-store): loading an aggregate with a long history (with
 * and without its snapshot), loading a number's busy day (a state that grows with its stream), and rebuilding one
 * projector over a long log, with its memory along the way.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { type Kysely, sql } from 'kysely';
import type { EventMetadata, NewEvent, StreamAppend } from '../../application/ports/event-store.port.js';
import { CommandExecutor } from '../../application/shared/execute.js';
import { accountDecider, accountStream } from '../../domain/account/account.decider.js';
import { dailyCounterDecider, numberDayStream } from '../../domain/conversation/daily-counter.decider.js';
import { monthlyChargeId } from '../../domain/phone-number/pricing.js';
import { webhookDeliveryStream } from '../../domain/webhook/webhook-delivery.decider.js';
import type { DatabaseHandle } from '../../infrastructure/db/database.js';
import { KyselySnapshotStore } from '../../infrastructure/event-store/kysely-snapshot-store.js';
import type { PgEventStore } from '../../infrastructure/event-store/pg-event-store.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { webhookDeliveriesProjector } from '../../projections/webhooks/webhook-deliveries.projector.js';
import { noReadModels } from '../../test/support/fixtures.js';
import { benchMetadata } from './bench.js';

const metadata = (accountId: string): EventMetadata => benchMetadata(accountId, 'bench');
const clock = { now: () => new Date() };
const ids = {
  id: (p: string) => `${p}_${randomUUID()}`,
  uuid: () => randomUUID(),
  derived: (p: string, ...parts: string[]) => `${p}_${parts.join(':')}`,
};
const percentile = (xs: readonly number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] ?? NaN;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

export type LoadFigures = Readonly<{ events: number; fullFoldMs: number; snapshotP50Ms: number; snapshotP99Ms: number; loads: number }>;

/**
 * An account with `n` charges, loaded from the start once, then many times from its snapshot: nine in ten are lookups,
 * the tenth a monthly charge of one of its 10 numbers (an account holds at most its lifetime slots), month after month.
 */
export async function loadLongAggregate(store: PgEventStore, handle: DatabaseHandle, n: number): Promise<LoadFigures> {
  const accountId = `acc_bench_${randomUUID().slice(0, 8)}`;
  const stream = accountStream(accountId);
  const plain = new CommandExecutor(store, ids, clock, noReadModels);
  const snapshotting = new CommandExecutor(store, ids, clock, noReadModels, new KyselySnapshotStore(handle.db));
  await plain.execute(
    accountDecider,
    stream,
    {
      type: 'OpenAccount',
      data: { accountId, name: 'Bench', parentAccountId: null, startingCreditMicros: 9_000_000_000, numberLimit: 10, initialKey: null },
    },
    { accountId, requestId: null, correlationId: 'bench', actor: 'system:bench' },
  );
  let balance = 9_000_000_000;
  for (let i = 0, revision = 0n; i < n; i += 1000) {
    const events: NewEvent[] = Array.from({ length: Math.min(1000, n - i) }, (_, k) => {
      balance -= 10;
      const monthly = (i + k) % 10 === 0;
      return {
        id: randomUUID(),
        type: 'AccountCharged',
        data: {
          accountId,
          // the account's 10 numbers (its lifetime slots), each charged month after month
          chargeId: monthly ? monthlyChargeId(`pn_${((i + k) / 10) % 10}`, Math.floor((i + k) / 100)) : `number_lookup:${randomUUID()}`,
          amountMicros: 10,
          balanceMicros: balance,
          kind: monthly ? 'number_monthly' : 'number_lookup',
          description: 'charge',
          reference: null,
          chargedAt: new Date().toISOString(),
        },
        metadata: metadata(accountId),
      };
    });
    await store.appendToStream(stream, events, { expectedRevision: revision });
    revision += BigInt(events.length);
  }
  let t = performance.now();
  await plain.load(accountDecider, stream);
  const fullFoldMs = performance.now() - t;
  await snapshotting.load(accountDecider, stream); // leaves the snapshot
  await new Promise((r) => setTimeout(r, 500));
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    t = performance.now();
    await snapshotting.load(accountDecider, stream);
    times.push(performance.now() - t);
  }
  return { events: n + 1, fullFoldMs, snapshotP50Ms: percentile(times, 50), snapshotP99Ms: percentile(times, 99), loads: times.length };
}

export type BusyDayFigures = Readonly<{ events: number; foldMs: number }>;

/**
 * A number's day of `n` counted sends (its daily counters: one event per contact who never wrote to it, at limits
 * raised that high), loaded from the start as the first send after a restart loads it
 * (docs/event-store.md#states-that-grow).
 */
export async function loadBusyDay(store: PgEventStore, n: number): Promise<BusyDayFigures> {
  const numberId = `pn_bench_${randomUUID().slice(0, 8)}`;
  const day = '2026-03-01';
  const stream = numberDayStream(numberId, day);
  for (let i = 0, revision: bigint | 'no_stream' = 'no_stream'; i < n; i += 1000) {
    const events: NewEvent[] = Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({
      id: randomUUID(),
      type: 'DailySendCounted',
      data: {
        numberId,
        day,
        participant: `+1312${String(i + k).padStart(7, '0')}`,
        newConversation: (i + k) % 2 === 0,
        countedAt: new Date().toISOString(),
      },
      metadata: metadata('acc_bench'),
    }));
    revision = (await store.appendToStream(stream, events, { expectedRevision: revision })).nextRevision;
  }
  const plain = new CommandExecutor(store, ids, clock, noReadModels);
  const t = performance.now();
  await plain.load(dailyCounterDecider, stream);
  return { events: n, foldMs: performance.now() - t };
}

export type RebuildFigures = Readonly<{
  events: number;
  seconds: number;
  perSecond: number;
  rssStart: number;
  rssPeak: number;
  heapAtQuarters: number[];
}>;

/** `deliveries` webhook deliveries of four events each (scheduled, failed, succeeded, delivered), then a rebuild of their log. */
export async function rebuildLongLog(store: PgEventStore, db: Kysely<ReadDb>, deliveries: number): Promise<RebuildFigures> {
  const accountId = `acc_bench_${randomUUID().slice(0, 8)}`;
  const at = new Date('2026-01-01T00:00:00.000Z').toISOString();
  const appends: StreamAppend[] = [];
  const flush = async () => {
    await store.appendMany(appends.splice(0));
  };
  for (let i = 0; i < deliveries; i++) {
    const deliveryId = `whd_bench_${i}_${randomUUID().slice(0, 8)}`;
    const base = { deliveryId, accountId };
    const target = { webhookId: 'whk_bench', webhookAgentId: null };
    const ev = (type: string, data: Record<string, unknown>): NewEvent => ({ id: randomUUID(), type, data, metadata: metadata(accountId) });
    appends.push({
      stream: webhookDeliveryStream(deliveryId),
      expectedRevision: 'no_stream',
      events: [
        ev('WebhookDeliveryScheduled', {
          ...base,
          ...target,
          maxAttempts: 6,
          test: false,
          scheduledAt: at,
          firstAttemptAt: at,
          eventType: 'agent.message',
          channel: 'sms',
          agentId: 'agt_bench',
          messageId: `msg_${i}`,
          sourceEventId: randomUUID(),
          sourceEventType: 'MessageReceived',
          body: '{"event":"agent.message"}',
        }),
        ev('WebhookAttemptFailed', {
          ...base,
          attempt: 1,
          httpStatus: 503,
          errorMessage: 'HTTP 503',
          responseBody: null,
          durationMs: 12,
          attemptedAt: at,
          nextAttemptAt: at,
        }),
        ev('WebhookAttemptSucceeded', { ...base, attempt: 2, httpStatus: 200, responseBody: 'ok', durationMs: 9, attemptedAt: at }),
        ev('WebhookDeliverySucceeded', { ...base, ...target, attempts: 2, test: false, deliveredAt: at }),
      ],
    });
    if (appends.length === 500) await flush();
  }
  if (appends.length) await flush();
  // as autovacuum would before long: a freshly bulk-loaded log has no statistics, and the filtered reads plan badly
  await sql`analyze events`.execute(db);

  const rssStart = process.memoryUsage().rss;
  let rssPeak = rssStart;
  const heapAtQuarters: number[] = [];
  let quarter = 1;
  const t = performance.now();
  const report = await rebuildProjector(db, store, webhookDeliveriesProjector, {
    checkOnly: true,
    batchSize: 2000,
    onProgress: (done, total) => {
      const m = process.memoryUsage();
      rssPeak = Math.max(rssPeak, m.rss);
      while (quarter <= 4 && done >= (quarter * total) / 4) {
        heapAtQuarters.push(m.heapUsed);
        quarter++;
      }
    },
  });
  const seconds = (performance.now() - t) / 1000;
  return { events: report.events, seconds, perSecond: report.events / seconds, rssStart, rssPeak, heapAtQuarters };
}

export function printLoad(target: string, f: LoadFigures): void {
  console.log(
    `${target}: loading an account of ${f.events.toLocaleString('en-US')} events: from the start ${f.fullFoldMs.toFixed(0)} ms; from its snapshot p50 ${f.snapshotP50Ms.toFixed(2)} ms, p99 ${f.snapshotP99Ms.toFixed(2)} ms (${f.loads} loads)`,
  );
}

export function printBusyDay(target: string, f: BusyDayFigures): void {
  console.log(
    `${target}: loading a number's day of ${f.events.toLocaleString('en-US')} counted sends from the start: ${f.foldMs.toFixed(0)} ms`,
  );
}

export function printRebuild(target: string, f: RebuildFigures): void {
  console.log(
    `${target}: rebuild of webhook_deliveries_v1 over ${f.events.toLocaleString('en-US')} events: ${f.seconds.toFixed(1)} s, ${Math.round(f.perSecond).toLocaleString('en-US')} events/s; rss ${mb(f.rssStart)} -> peak ${mb(f.rssPeak)}; heap at each quarter ${f.heapAtQuarters.map(mb).join(', ')}`,
  );
}

/**
 * Rebuild rate of the analytics projectors (`npm run bench:projections`; docs/testing.md#projections).
 *
 * Writes a synthetic event log straight into the PostgreSQL event store's `events` table (the shapes the
 * platform records: texts out and in with their receipts, calls with their turns, webhook deliveries, charges),
 * then rebuilds each analytics projector from position zero with `rebuildProjector` — the code behind
 * `npm run cli -- rebuild` — and prints the events each applied per second. Last, all four rebuild at once, as
 * the projection engine runs them.
 *
 * On PGlite in memory (BENCH_EMBEDDED_EVENTS analytics events, default 100,000) and, with DATABASE_URL, on that
 * server (BENCH_EVENTS, default 1,000,000), in a scratch database that is created and dropped (the role needs
 * CREATEDB). BENCH_SCALE scales both. Figures are printed, never asserted.
 */

import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { type Kysely, sql } from 'kysely';
import type { ClockPort } from '../application/ports/clock.port.js';
import { type EventStorePort, START } from '../application/ports/event-store.port.js';
import { type DatabaseHandle, openDatabase } from '../infrastructure/db/database.js';
import { migrateToLatest } from '../infrastructure/db/migrate.js';
import { PgEventStore } from '../infrastructure/event-store/pg-event-store.js';
import { analyticsProjectors } from '../projections/analytics/analytics.projectors.js';
import type { Projector } from '../projections/shared/projector.js';
import type { ReadDb } from '../projections/shared/read-db.js';
import { rebuildProjector } from '../projections/shared/rebuild.js';
import { runBench } from './support/bench.js';
import { serverVersion } from './support/database-facts.js';
import { targetsLine, withScratchDatabase } from './support/scratch-db.js';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
if (!(SCALE > 0)) throw new Error(`BENCH_SCALE must be a positive number, got ${process.env.BENCH_SCALE}`);
const SERVER_EVENTS = Math.round(Number(process.env.BENCH_EVENTS ?? 1_000_000) * SCALE);
const EMBEDDED_EVENTS = Math.round(Number(process.env.BENCH_EMBEDDED_EVENTS ?? 100_000) * SCALE);
const INSERT_ROWS = 2000;
const POOL = 8;

const clock: ClockPort = { now: () => new Date() };
const HANDLED = new Set(analyticsProjectors.flatMap((p) => [...p.handles]));

type Row = {
  event_id: string;
  stream_name: string;
  stream_category: string;
  stream_revision: string;
  event_type: string;
  data: string;
  metadata: string;
  created_at: string;
};

/**
 * The synthetic log, one account's day of work after another: 2 texts out (accepted, queued, submitted, a receipt,
 * delivered), 2 texts in (received on the conversation and the message, each an agent.message delivery: scheduled,
 * attempt, delivered), a call (placed, ringing, answered, 4 caller and 4 agent turns with latencies, ended, its
 * agent.call_ended delivery) and a lookup charge. Counts stop once `handled` analytics events are written.
 */
function* log(handled: number): Generator<Row> {
  let made = 0;
  let t = Date.parse('2026-01-01T08:00:00Z');
  const revisions = new Map<string, number>();
  const row = (stream: string, type: string, data: Record<string, unknown>, accountId: string): Row => {
    const revision = revisions.get(stream) ?? 0;
    revisions.set(stream, revision + 1);
    t += 97;
    const at = new Date(t).toISOString();
    if (HANDLED.has(type)) made++;
    return {
      event_id: randomUUID(),
      stream_name: stream,
      stream_category: stream.slice(0, stream.indexOf('-')),
      stream_revision: String(revision),
      event_type: type,
      data: JSON.stringify({ ...data, at }),
      metadata: JSON.stringify({
        accountId,
        correlationId: randomUUID(),
        causationId: null,
        requestId: null,
        actor: 'system:bench',
        schemaVersion: 1,
      }),
      created_at: at,
    };
  };
  const now = () => new Date(t).toISOString();
  for (let i = 0; made < handled; i++) {
    const accountId = `acc_${i % 200}`;
    const numberId = `pn_${i % 2000}`;
    const agentId = i % 7 === 0 ? null : `agt_${i % 1000}`;
    const conv = `conversation-conv_${i % 5000}`;
    const target = { webhookId: `whk_${i % 200}`, webhookAgentId: null };
    const delivery = function* (kind: string) {
      const deliveryId = `whd_${kind}_${i}`;
      const s = `webhook_delivery-${deliveryId}`;
      yield row(
        s,
        'WebhookDeliveryScheduled',
        {
          deliveryId,
          accountId,
          ...target,
          maxAttempts: 6,
          test: false,
          eventType: kind,
          channel: 'sms',
          agentId,
          messageId: null,
          sourceEventId: null,
          sourceEventType: 'x',
          body: '{}',
          scheduledAt: now(),
          firstAttemptAt: now(),
        },
        accountId,
      );
      yield row(
        s,
        'WebhookAttemptSucceeded',
        { deliveryId, accountId, attempt: 1, httpStatus: 200, responseBody: 'ok', durationMs: 20 + (i % 80), attemptedAt: now() },
        accountId,
      );
      yield row(
        s,
        'WebhookDeliverySucceeded',
        { deliveryId, accountId, ...target, attempts: 1, test: false, deliveredAt: now() },
        accountId,
      );
    };
    for (let k = 0; k < 2; k++) {
      const messageId = `msg_out_${i}_${k}`;
      const m = `message-${messageId}`;
      yield row(
        conv,
        'OutboundMessageAccepted',
        {
          conversationId: conv.slice(13),
          messageId,
          body: 'See you at 7',
          mediaUrls: [],
          channel: 'sms',
          encoding: 'GSM-7',
          segments: 1,
          numberId,
          agentId,
          from: '+12045550100',
          to: '+13125550100',
          recipients: ['+13125550100'],
          replyToMessageId: null,
          sendStyle: null,
          kind: 'message',
          reengagement: false,
          acceptedAt: now(),
        },
        accountId,
      );
      yield row(m, 'MessageQueued', { messageId, queuedAt: now() }, accountId);
      yield row(m, 'MessageSubmitted', { messageId, carrierMessageIds: [`sm_${i}_${k}`], submittedAt: now() }, accountId);
      yield row(m, 'MessageReceiptRecorded', { messageId, receiptId: `r_${i}_${k}`, status: 'sent', outcome: 'applied' }, accountId);
      if ((i + k) % 20 === 0)
        yield row(
          m,
          'MessageFailed',
          {
            messageId,
            failureReason: 'A temporary error occurred. Retry shortly.',
            errorCode: 'TEMPORARY_ERROR',
            failureCategory: 'transient',
            retryable: true,
            source: 'carrier',
            failedAt: now(),
          },
          accountId,
        );
      else yield row(m, 'MessageDelivered', { messageId, deliveredAt: now() }, accountId);
    }
    for (let k = 0; k < 2; k++) {
      const messageId = `msg_in_${i}_${k}`;
      yield row(
        conv,
        'InboundMessageReceived',
        {
          conversationId: conv.slice(13),
          messageId,
          body: 'Thanks!',
          mediaUrls: [],
          channel: 'sms',
          encoding: 'GSM-7',
          segments: 1,
          numberId,
          agentId,
          from: '+13125550100',
          to: '+12045550100',
          carrierMessageId: `sm_in_${i}_${k}`,
          keyword: null,
          receivedAt: now(),
        },
        accountId,
      );
      yield row(`message-${messageId}`, 'MessageReceived', { messageId }, accountId);
      yield* delivery(`agent.message.${k}`);
    }
    const callId = `call_${i}`;
    const c = `call-${callId}`;
    yield row(
      c,
      'CallPlaced',
      {
        callId,
        accountId,
        direction: 'outbound',
        agentId,
        numberId,
        from: '+12045550100',
        to: '+16465550150',
        settings: {},
        placedAt: now(),
      },
      accountId,
    );
    yield row(c, 'CallRinging', { callId }, accountId);
    yield row(c, 'CallAnswered', { callId, answeredBy: 'human', engineCallId: `CA${i}` }, accountId);
    for (let k = 0; k < 4; k++) {
      yield row(
        c,
        'CallerTurnRecorded',
        { callId, turnId: `turn_c${k}`, transcript: 'Hi', confidence: 0.9, startedAt: now(), endedAt: now() },
        accountId,
      );
      yield row(
        c,
        'AgentTurnRecorded',
        {
          callId,
          turnId: `turn_a${k}`,
          source: 'webhook',
          text: 'Hello',
          spoken: 'Hello',
          interrupted: false,
          replyTo: null,
          silentReason: null,
          latency: { requestMs: 1.2, firstByteMs: 90 + (i % 50), speechStartMs: 2.5 },
          actions: [],
          startedAt: now(),
          endedAt: now(),
        },
        accountId,
      );
    }
    yield row(
      c,
      'CallEnded',
      {
        callId,
        accountId,
        direction: 'outbound',
        agentId,
        numberId,
        status: 'completed',
        reason: 'user_hangup',
        durationSeconds: 30 + (i % 90),
        endedAt: now(),
      },
      accountId,
    );
    yield* delivery('agent.call_ended');
    if (i % 5 === 0)
      yield row(
        `account-${accountId}`,
        'AccountCharged',
        {
          accountId,
          chargeId: `number_lookup:${i}`,
          amountMicros: 18_000,
          balanceMicros: 0,
          kind: 'number_lookup',
          description: 'Number lookup: 2 numbers',
          reference: null,
          chargedAt: now(),
        },
        accountId,
      );
  }
}

/** Writes the log in multi-row inserts, each its own transaction (so its own transaction id, as appends have). */
async function writeLog(db: Kysely<ReadDb>, handled: number): Promise<number> {
  let total = 0;
  let batch: Row[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const values = batch;
    batch = [];
    await sql`insert into events (transaction_id, event_id, stream_name, stream_category, stream_revision, event_type, data, metadata, created_at)
      select pg_current_xact_id(), r.event_id::uuid, r.stream_name, r.stream_category, r.stream_revision::bigint, r.event_type, r.data::jsonb, r.metadata::jsonb, r.created_at::timestamptz
      from json_to_recordset(${JSON.stringify(values)}::json) as r(event_id text, stream_name text, stream_category text, stream_revision text, event_type text, data text, metadata text, created_at text)`.execute(
      db,
    );
    total += values.length;
  };
  for (const r of log(handled)) {
    batch.push(r);
    if (batch.length >= INSERT_ROWS) await flush();
  }
  await flush();
  return total;
}

type Result = { target: string; scenario: string; events: number; ms: number; rows?: number };

const timed = async <T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> => {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
};

async function rowsOf(db: Kysely<ReadDb>, p: Projector): Promise<number> {
  let n = 0;
  for (const t of p.tables) n += Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(t)}`.execute(db)).rows[0]?.n ?? 0);
  return n;
}

async function benchTarget(target: string, handle: DatabaseHandle, handled: number): Promise<Result[]> {
  const db = handle.db as unknown as Kysely<ReadDb>;
  const store: EventStorePort = new PgEventStore(handle.db, clock);
  const results: Result[] = [];
  try {
    process.stdout.write(`${target}: writing a log with ${handled.toLocaleString('en-US')} analytics events… `);
    const written = await timed(() => writeLog(db, handled));
    console.log(`${written.value.toLocaleString('en-US')} events in ${(written.ms / 1000).toFixed(1)} s`);
    await sql`analyze events`.execute(db);

    const read = await timed(async () => {
      let after = START;
      let count = 0;
      for (;;) {
        const page = await store.readAll({ after, maxCount: 500, filter: { eventTypes: [...HANDLED] } });
        count += page.length;
        if (page.length < 500) return count;
        after = page[page.length - 1]!.checkpoint;
      }
    });
    results.push({ target, scenario: 'read only: the analytics event types, pages of 500', events: read.value, ms: read.ms });

    for (const p of analyticsProjectors) {
      const r = await timed(() => rebuildProjector(db, store, p));
      results.push({ target, scenario: `rebuild ${p.name}`, events: r.value.events, ms: r.ms, rows: await rowsOf(db, p) });
    }
    const all = await timed(() => Promise.all(analyticsProjectors.map((p) => rebuildProjector(db, store, p))));
    results.push({ target, scenario: 'rebuild all four at once', events: all.value.reduce((t, r) => t + r.events, 0), ms: all.ms });
  } finally {
    await store.close();
  }
  return results;
}

async function onPglite(): Promise<Result[]> {
  const handle = await openDatabase({});
  try {
    await migrateToLatest(handle.db as never);
    return await benchTarget(`pglite ${await serverVersion(handle.db)} (memory)`, handle, EMBEDDED_EVENTS);
  } finally {
    await handle.close();
  }
}

async function onServer(url: string): Promise<Result[]> {
  return withScratchDatabase(url, async (scoped) => {
    const handle = await openDatabase({ databaseUrl: scoped, poolSize: POOL });
    try {
      await migrateToLatest(handle.db as never);
      return await benchTarget(`postgres ${await serverVersion(handle.db)} (server)`, handle, SERVER_EVENTS);
    } finally {
      await handle.close();
    }
  });
}

function printTable(results: readonly Result[]): void {
  const header = ['target', 'scenario', 'events', 'time s', 'events/s', 'rows'];
  const rows = results.map((r) => [
    r.target,
    r.scenario,
    r.events.toLocaleString('en-US'),
    (r.ms / 1000).toFixed(1),
    Math.round(r.events / (r.ms / 1000)).toLocaleString('en-US'),
    r.rows === undefined ? '-' : r.rows.toLocaleString('en-US'),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-+-'));
  for (const r of rows) console.log(line(r));
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  console.log(`projections bench: node ${process.version}, scale ${SCALE}; ${targetsLine(url)}`);
  console.log('events = analytics events applied (a rebuild first counts them with one count(*)); rows = rows of the rebuilt tables');
  const started = performance.now();
  const results = [...(await onPglite()), ...(url ? await onServer(url) : [])];
  console.log('');
  printTable(results);
  console.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

runBench(main);

import { type Kysely, type RawBuilder, sql } from 'kysely';
import {
  type AgentUsageRow,
  type AnalyticsQueries,
  type CallAgentRow,
  type MessageDeliveryRow,
  type NumberUsage,
  type Percentiles,
  type UsageCounts,
  type WebhookEndpointRow,
  zeroCounts,
} from '../../application/analytics/analytics.port.js';
import { COUNTED_CALL_STATUS } from '../../domain/analytics/counting.js';
import type { ReadDb } from '../shared/read-db.js';
import './tables.js';

const n = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const ms = (v: unknown): number | null => (v === null || v === undefined ? null : Math.round(Number(v) * 10) / 10);

/** Percentiles of one column, as select items `<p>_p50`, `_p90`, `_p99`, `_max` (nulls are left out by PostgreSQL). */
const percentiles = (column: string, as: string) =>
  sql.raw(
    `percentile_cont(0.5) within group (order by ${column}) as ${as}_p50, ` +
      `percentile_cont(0.9) within group (order by ${column}) as ${as}_p90, ` +
      `percentile_cont(0.99) within group (order by ${column}) as ${as}_p99, max(${column}) as ${as}_max`,
  );
const pick = (r: Record<string, unknown>, as: string): Percentiles => ({
  p50: ms(r[`${as}_p50`]),
  p90: ms(r[`${as}_p90`]),
  p99: ms(r[`${as}_p99`]),
  max: ms(r[`${as}_max`]),
});

/**
 * The analytics queries (docs/analytics.md), over the tables of the analytics projectors. Each applies the one
 * counting rule (domain/analytics/counting.ts): messages on credit channels (`counted`), calls that completed,
 * deliveries that are not test sends. Days are UTC dates (`day` columns); spans of instants use the rows' times.
 */
export class KyselyAnalyticsQueries implements AnalyticsQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  /** The four counting queries, grouped by `bucket` (a to_char format) or not at all. */
  private async counts(accountId: string, fromDay: string | null, toDay: string, format: string | null): Promise<Map<string, UsageCounts>> {
    const bucket: RawBuilder<string> = format ? sql<string>`to_char(day, ${format})` : sql<string>`''`;
    const since = fromDay ? sql`and day >= ${fromDay}::date` : sql``;
    const group = format ? sql`group by 1` : sql``;
    const [messages, calls, webhooks, charges] = await Promise.all([
      sql<Record<string, unknown>>`
        select ${bucket} as bucket, count(*) as messages,
               count(*) filter (where direction = 'outbound') as sent, count(*) filter (where direction = 'inbound') as received,
               coalesce(sum(segments), 0) as segments
        from analytics_messages where account_id = ${accountId} and counted ${since} and day < ${toDay}::date ${group}`.execute(this.db),
      sql<Record<string, unknown>>`
        select ${bucket} as bucket, count(*) as calls, coalesce(sum(duration_seconds), 0) as seconds
        from analytics_calls where account_id = ${accountId} and status = ${COUNTED_CALL_STATUS} ${since} and day < ${toDay}::date ${group}`.execute(
        this.db,
      ),
      sql<Record<string, unknown>>`
        select ${bucket} as bucket, count(*) as webhooks,
               count(*) filter (where status = 'success') as succeeded, count(*) filter (where status = 'failed') as failed
        from analytics_webhook_deliveries where account_id = ${accountId} and not test ${since} and day < ${toDay}::date ${group}`.execute(
        this.db,
      ),
      sql<Record<string, unknown>>`
        select ${bucket} as bucket, coalesce(sum(quantity) filter (where kind = 'number_lookup'), 0) as lookups,
               coalesce(sum(amount_micros), 0) as spent
        from analytics_charges where account_id = ${accountId} ${since} and day < ${toDay}::date ${group}`.execute(this.db),
    ]);
    const out = new Map<string, UsageCounts>();
    const at = (b: unknown) => {
      const key = String(b);
      let c = out.get(key);
      if (!c) {
        c = zeroCounts();
        out.set(key, c);
      }
      return c;
    };
    for (const r of messages.rows) {
      const c = at(r.bucket);
      c.messages = n(r.messages);
      c.messagesSent = n(r.sent);
      c.messagesReceived = n(r.received);
      c.segments = n(r.segments);
    }
    for (const r of calls.rows) {
      const c = at(r.bucket);
      c.calls = n(r.calls);
      c.callSeconds = n(r.seconds);
    }
    for (const r of webhooks.rows) {
      const c = at(r.bucket);
      c.webhooks = n(r.webhooks);
      c.webhooksSucceeded = n(r.succeeded);
      c.webhooksFailed = n(r.failed);
    }
    for (const r of charges.rows) {
      const c = at(r.bucket);
      c.lookups = n(r.lookups);
      c.spentMicros = n(r.spent);
    }
    return out;
  }

  series(accountId: string, unit: 'day' | 'month', fromDay: string, toDay: string): Promise<Map<string, UsageCounts>> {
    return this.counts(accountId, fromDay, toDay, unit === 'day' ? 'YYYY-MM-DD' : 'YYYY-MM');
  }

  async totals(accountId: string, fromDay: string | null, toDay: string): Promise<UsageCounts> {
    return (await this.counts(accountId, fromDay, toDay, null)).get('') ?? zeroCounts();
  }

  async byNumber(accountId: string): Promise<NumberUsage[]> {
    const r = await sql<Record<string, unknown>>`
      with m as (
        select number_id, count(*) as messages, count(*) filter (where direction = 'outbound') as sent,
               count(*) filter (where direction = 'inbound') as received
        from analytics_messages where account_id = ${accountId} and counted group by number_id),
      c as (
        select number_id, count(*) as calls, coalesce(sum(duration_seconds), 0) as seconds
        from analytics_calls where account_id = ${accountId} and status = ${COUNTED_CALL_STATUS} and number_id is not null group by number_id)
      select n.number_id, n.phone_number, n.country, n.status, n.agent_id, a.name as agent_name,
             m.messages, m.sent, m.received, c.calls, c.seconds
      from phone_numbers n
      left join agents a on a.agent_id = n.agent_id and a.account_id = n.account_id
      left join m on m.number_id = n.number_id
      left join c on c.number_id = n.number_id
      where n.account_id = ${accountId} and n.status in ('active', 'released') and n.phone_number is not null
      order by n.requested_at, n.number_id`.execute(this.db);
    return r.rows.map((x) => ({
      numberId: String(x.number_id),
      phoneNumber: String(x.phone_number),
      country: String(x.country),
      status: String(x.status),
      agentId: (x.agent_id as string | null) ?? null,
      agentName: (x.agent_name as string | null) ?? null,
      messages: n(x.messages),
      messagesSent: n(x.sent),
      messagesReceived: n(x.received),
      calls: n(x.calls),
      callSeconds: n(x.seconds),
    }));
  }

  async byAgent(accountId: string, from: string, to: string): Promise<AgentUsageRow[]> {
    const r = await sql<Record<string, unknown>>`
      with m as (
        select agent_id, count(*) as messages from analytics_messages
        where account_id = ${accountId} and counted and at >= ${from}::timestamptz and at < ${to}::timestamptz group by agent_id),
      c as (
        select agent_id, count(*) as calls, coalesce(sum(duration_seconds), 0) as seconds from analytics_calls
        where account_id = ${accountId} and status = ${COUNTED_CALL_STATUS}
          and started_at >= ${from}::timestamptz and started_at < ${to}::timestamptz group by agent_id),
      ids as (
        select agent_id from agents where account_id = ${accountId} and deleted_at is null
        union select agent_id from m union select agent_id from c)
      select ids.agent_id, a.name, a.deleted_at, m.messages, c.calls, c.seconds
      from ids
      left join agents a on a.agent_id = ids.agent_id and a.account_id = ${accountId}
      left join m on m.agent_id is not distinct from ids.agent_id
      left join c on c.agent_id is not distinct from ids.agent_id`.execute(this.db);
    return r.rows.map((x) => ({
      agentId: (x.agent_id as string | null) ?? null,
      agentName: (x.name as string | null) ?? null,
      deleted: x.agent_id !== null && (x.name === null || x.deleted_at !== null),
      messages: n(x.messages),
      calls: n(x.calls),
      totalSeconds: n(x.seconds),
    }));
  }

  async messageDelivery(accountId: string, fromDay: string, toDay: string): Promise<MessageDeliveryRow[]> {
    const scope = sql`account_id = ${accountId} and counted and direction = 'outbound' and day >= ${fromDay}::date and day < ${toDay}::date`;
    const [rows, failures, numbers] = await Promise.all([
      sql<Record<string, unknown>>`
        select to_char(day, 'YYYY-MM-DD') as date, number_id, count(*) as sent,
               count(*) filter (where status in ('delivered', 'read')) as delivered,
               count(*) filter (where status = 'failed') as failed
        from analytics_messages where ${scope} group by 1, 2 order by 1, 2`.execute(this.db),
      sql<Record<string, unknown>>`
        select to_char(day, 'YYYY-MM-DD') as date, number_id, coalesce(failure_category, 'unknown') as category, count(*) as n
        from analytics_messages where ${scope} and status = 'failed' group by 1, 2, 3`.execute(this.db),
      this.db.selectFrom('phone_numbers').select(['number_id', 'phone_number']).where('account_id', '=', accountId).execute(),
    ]);
    const e164 = new Map(numbers.map((x) => [x.number_id, x.phone_number]));
    const byKey = new Map<string, Record<string, number>>();
    for (const f of failures.rows) {
      const k = `${f.date}|${f.number_id}`;
      byKey.set(k, { ...byKey.get(k), [String(f.category)]: n(f.n) });
    }
    return rows.rows.map((x) => {
      const failuresByCategory = byKey.get(`${x.date}|${x.number_id}`) ?? {};
      const sent = n(x.sent);
      const delivered = n(x.delivered);
      const failed = n(x.failed);
      return {
        date: String(x.date),
        numberId: String(x.number_id),
        phoneNumber: e164.get(String(x.number_id)) ?? null,
        sent,
        delivered,
        failed,
        pending: sent - delivered - failed,
        failuresByCategory,
      };
    });
  }

  async webhookEndpoints(accountId: string, fromDay: string, toDay: string): Promise<WebhookEndpointRow[]> {
    const [deliveries, attempts, hooks] = await Promise.all([
      sql<Record<string, unknown>>`
        select webhook_id, count(*) as deliveries, count(*) filter (where status = 'success') as succeeded,
               count(*) filter (where status = 'failed') as failed, count(*) filter (where status = 'pending') as pending
        from analytics_webhook_deliveries
        where account_id = ${accountId} and not test and day >= ${fromDay}::date and day < ${toDay}::date group by webhook_id`.execute(
        this.db,
      ),
      sql<Record<string, unknown>>`
        select a.webhook_id, count(*) as attempts, count(*) filter (where not a.ok) as failed_attempts, ${percentiles('a.duration_ms', 'lat')}
        from analytics_webhook_attempts a
        join analytics_webhook_deliveries d on d.delivery_id = a.delivery_id and not d.test
        where a.account_id = ${accountId} and a.day >= ${fromDay}::date and a.day < ${toDay}::date group by a.webhook_id`.execute(this.db),
      this.db
        .selectFrom('webhooks')
        .select(['webhook_id', 'url', 'agent_id', 'status', 'deleted_at'])
        .where('account_id', '=', accountId)
        .execute(),
    ]);
    const ids = [...new Set([...deliveries.rows.map((r) => String(r.webhook_id)), ...attempts.rows.map((r) => String(r.webhook_id))])];
    return ids.sort().map((id) => {
      const d = deliveries.rows.find((r) => r.webhook_id === id) ?? {};
      const a = attempts.rows.find((r) => r.webhook_id === id) ?? {};
      const w = hooks.find((h) => h.webhook_id === id);
      return {
        webhookId: id,
        url: w?.url ?? null,
        agentId: w?.agent_id ?? null,
        status: w ? (w.deleted_at ? 'deleted' : w.status) : 'deleted',
        deliveries: n(d.deliveries),
        succeeded: n(d.succeeded),
        failed: n(d.failed),
        pending: n(d.pending),
        attempts: n(a.attempts),
        failedAttempts: n(a.failed_attempts),
        attemptLatencyMs: pick(a, 'lat'),
      };
    });
  }

  async callsByAgent(accountId: string, fromDay: string, toDay: string): Promise<CallAgentRow[]> {
    const range = sql`account_id = ${accountId} and day >= ${fromDay}::date and day < ${toDay}::date`;
    const [calls, outcomes, turns, agents] = await Promise.all([
      sql<Record<string, unknown>>`
        select agent_id, count(*) as placed, count(*) filter (where status = 'completed') as completed,
               count(*) filter (where status = 'failed') as failed, count(*) filter (where status = 'in-progress') as in_progress,
               coalesce(sum(duration_seconds) filter (where status = ${COUNTED_CALL_STATUS}), 0) as seconds
        from analytics_calls where ${range} group by agent_id`.execute(this.db),
      sql<Record<string, unknown>>`
        select agent_id, reason, count(*) as n from analytics_calls where ${range} and reason is not null group by agent_id, reason`.execute(
        this.db,
      ),
      sql<Record<string, unknown>>`
        select agent_id, count(*) as turns, ${percentiles('total_ms', 'total')}, ${percentiles('request_ms', 'req')},
               ${percentiles('first_byte_ms', 'fb')}, ${percentiles('speech_start_ms', 'sp')}
        from analytics_call_turns where ${range} group by agent_id`.execute(this.db),
      this.db.selectFrom('agents').select(['agent_id', 'name', 'deleted_at']).where('account_id', '=', accountId).execute(),
    ]);
    const same = (a: unknown, b: unknown) => (a ?? null) === (b ?? null);
    return calls.rows
      .map((c) => {
        const t = turns.rows.find((r) => same(r.agent_id, c.agent_id)) ?? {};
        const agent = agents.find((a) => a.agent_id === c.agent_id);
        const byReason: Record<string, number> = {};
        for (const o of outcomes.rows) if (same(o.agent_id, c.agent_id)) byReason[String(o.reason)] = n(o.n);
        const agentId = (c.agent_id as string | null) ?? null;
        return {
          agentId,
          agentName: agent?.name ?? null,
          deleted: agentId !== null && (!agent || agent.deleted_at !== null),
          placed: n(c.placed),
          completed: n(c.completed),
          failed: n(c.failed),
          inProgress: n(c.in_progress),
          callSeconds: n(c.seconds),
          outcomes: byReason,
          turns: n(t.turns),
          turnLatencyMs: { total: pick(t, 'total'), requestMs: pick(t, 'req'), firstByteMs: pick(t, 'fb'), speechStartMs: pick(t, 'sp') },
        };
      })
      .sort((a, b) => b.placed - a.placed || String(a.agentId).localeCompare(String(b.agentId)));
  }
}

import { percent } from '../../domain/analytics/counting.js';
import type { ClockPort } from '../ports/clock.port.js';
import {
  type AnalyticsQueries,
  type CallAgentRow,
  type MessageDeliveryRow,
  type UsageCounts,
  type WebhookEndpointRow,
  zeroCounts,
} from './analytics.port.js';
import { addDays, addMonths, type Period, periodBounds, utcDay } from './periods.js';

/** The name of the bucket of messages and calls that no agent handled. */
export const UNASSIGNED = 'Unassigned';

/**
 * The usage and analytics endpoints (docs/analytics.md). Windows end today (UTC, by the Clock port) and every
 * bucket of a window is listed, oldest first, with zeros where nothing happened.
 */
type Point = UsageCounts & { voiceMinutes: number };

/** A usage point: its counts, and the call time in minutes (one decimal) that public clients print (docs/analytics.md#endpoints). */
const point = (c: UsageCounts | undefined): Point => {
  const counts = c ?? zeroCounts();
  return { ...counts, voiceMinutes: Math.round(counts.callSeconds / 6) / 10 };
};

export class UsageAnalytics {
  constructor(
    private readonly clock: ClockPort,
    private readonly queries: AnalyticsQueries,
  ) {}

  private today(): string {
    return utcDay(this.clock.now());
  }

  /** GET /v1/usage/daily: the last `days` days, today included. */
  async daily(accountId: string, days: number) {
    const tomorrow = addDays(this.today(), 1);
    const from = addDays(tomorrow, -days);
    const byDay = await this.queries.series(accountId, 'day', from, tomorrow);
    const data: ({ date: string } & Point)[] = [];
    for (let d = from; d < tomorrow; d = addDays(d, 1)) data.push({ date: d, ...point(byDay.get(d)) });
    return { days, data };
  }

  /** GET /v1/usage/monthly: the last `months` calendar months (UTC), this one included. */
  async monthly(accountId: string, months: number) {
    const thisMonth = this.today().slice(0, 7);
    const first = addMonths(thisMonth, -(months - 1));
    const byMonth = await this.queries.series(accountId, 'month', `${first}-01`, `${addMonths(thisMonth, 1)}-01`);
    const data: ({ month: string } & Point)[] = [];
    for (let m = first; m <= thisMonth; m = addMonths(m, 1)) data.push({ month: m, ...point(byMonth.get(m)) });
    return { months, data };
  }

  /** GET /v1/usage/by-number: every number, with its counts over all time. */
  async byNumber(accountId: string) {
    return { data: await this.queries.byNumber(accountId) };
  }

  /**
   * GET /v1/usage/by-agent: this calendar week (from Monday), month or year in `tz` (default UTC). Every live agent is
   * listed; a deleted agent that has counts in the period is listed as an orphan; messages and calls of no agent
   * form the "Unassigned" bucket when there are any. Most active first.
   */
  async byAgent(accountId: string, period: Period, tz: string | null) {
    const { start, end } = periodBounds(period, this.clock.now(), tz ?? 'UTC');
    const rows = await this.queries.byAgent(accountId, start.toISOString(), end.toISOString());
    const data = rows
      .filter((r) => r.agentId !== null || r.messages + r.calls > 0)
      .map((r) => ({
        agentId: r.agentId,
        agentName: r.agentId === null ? UNASSIGNED : (r.agentName ?? r.agentId),
        messages: r.messages,
        calls: r.calls,
        totalSeconds: r.totalSeconds,
        isOrphan: r.agentId !== null && r.deleted,
      }))
      .sort((a, b) => b.messages + b.calls - (a.messages + a.calls) || a.agentName.localeCompare(b.agentName));
    return { data, period, periodStart: start.toISOString(), periodEnd: end.toISOString(), tz: tz ?? 'UTC' };
  }

  /** The window [from, tomorrow) of the last `days` days. */
  private window(days: number): { from: string; to: string } {
    const to = addDays(this.today(), 1);
    return { from: addDays(to, -days), to };
  }

  /** GET /v1/analytics/messages: delivery rate and failures by category, per number and day. */
  async messageDelivery(accountId: string, days: number) {
    const w = this.window(days);
    const rows = await this.queries.messageDelivery(accountId, w.from, w.to);
    const withRate = (r: MessageDeliveryRow) => ({ ...r, deliveryRate: percent(r.delivered, r.delivered + r.failed) });
    return { days, from: w.from, to: addDays(w.to, -1), data: rows.map(withRate) };
  }

  /** GET /v1/analytics/webhooks: success rate and attempt latency per endpoint. */
  async webhooks(accountId: string, days: number) {
    const w = this.window(days);
    const rows = await this.queries.webhookEndpoints(accountId, w.from, w.to);
    const withRate = (r: WebhookEndpointRow) => ({ ...r, successRate: percent(r.succeeded, r.succeeded + r.failed) });
    return { days, from: w.from, to: addDays(w.to, -1), data: rows.map(withRate) };
  }

  /** GET /v1/analytics/calls: call outcomes and turn latency per agent. */
  async calls(accountId: string, days: number) {
    const w = this.window(days);
    const rows = await this.queries.callsByAgent(accountId, w.from, w.to);
    const named = (r: CallAgentRow) => ({
      ...r,
      agentName: r.agentId === null ? UNASSIGNED : (r.agentName ?? r.agentId),
      isOrphan: r.agentId !== null && r.deleted,
    });
    return { days, from: w.from, to: addDays(w.to, -1), data: rows.map(named) };
  }
}

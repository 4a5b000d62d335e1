import { MICROS_PER_DOLLAR } from '../../domain/account/account.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import { type AnalyticsQueries, type UsageCounts, zeroCounts } from '../analytics/analytics.port.js';
import type { ClockPort } from '../ports/clock.port.js';
import type { AccountQueries } from './account-queries.port.js';

/**
 * The self-serve plan's published monthly volumes (docs/accounts.md#usage). The other limits of `plan.limits` are
 * the ones the platform enforces, read where they are kept (`PlanLimits`).
 */
export const SELF_SERVE_PLAN = { name: 'self-serve', volumes: { messagesPerMonth: 10_000, voiceMinutesPerMonth: 1_000 } } as const;

/** The enforced limits usage reports: the live-call cap of an account (a sub-account's own, else the default) and the call length. */
export type PlanLimits = Readonly<{ concurrentCalls(accountId: string): Promise<number>; maxCallDurationMinutes: number }>;

const day = (d: Date) => d.toISOString().slice(0, 10);
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * 86_400_000);

/**
 * GET /v1/usage: plan, numbers (limit of the billing account), stats from the analytics projections by the one
 * counting rule (docs/analytics.md#the-counting-rule, the same as /v1/usage/daily and the delivery statistics), balance.
 */
export class UsageReport {
  constructor(
    private readonly clock: ClockPort,
    private readonly accounts: AccountQueries,
    private readonly analytics: AnalyticsQueries,
    private readonly limits: PlanLimits,
  ) {}

  async forAccount(accountId: string) {
    const me = await this.accounts.get(accountId);
    if (!me) throw new DomainError('ACCOUNT_NOT_FOUND', 'Account not found');
    const billing = me.parentAccountId ? await this.accounts.get(me.parentAccountId) : me;
    if (!billing) throw new DomainError('ACCOUNT_NOT_FOUND', 'Account not found');
    const now = this.clock.now();
    const today = day(now);
    const tomorrow = day(addDays(now, 1));
    const [all, last30] = await Promise.all([
      this.analytics.totals(accountId, null, tomorrow),
      this.analytics.series(accountId, 'day', day(addDays(now, -29)), tomorrow),
    ]);
    // whole UTC days: "24h" is today, "7d" today and the 6 days before, "30d" today and the 29 before
    const since = (from: string) => {
      const sum = zeroCounts();
      for (const [d, c] of last30) if (d >= from && d <= today) for (const k of Object.keys(sum) as (keyof UsageCounts)[]) sum[k] += c[k];
      return sum;
    };
    const d1 = since(today);
    const d7 = since(day(addDays(now, -6)));
    const d30 = since(day(addDays(now, -29)));
    const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const periodEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    return {
      plan: {
        name: SELF_SERVE_PLAN.name,
        limits: {
          numbers: billing.numberLimit,
          ...SELF_SERVE_PLAN.volumes,
          maxCallDurationMinutes: this.limits.maxCallDurationMinutes,
          concurrentCalls: await this.limits.concurrentCalls(accountId),
        },
      },
      numbers: { used: billing.numbersUsed, limit: billing.numberLimit, remaining: Math.max(0, billing.numberLimit - billing.numbersUsed) },
      stats: {
        totalMessages: all.messages,
        messagesLast24h: d1.messages,
        messagesLast7d: d7.messages,
        messagesLast30d: d30.messages,
        // beyond the public fields: the split by direction and the SMS segments (docs/messaging-encoding.md)
        messagesSent: all.messagesSent,
        messagesSentLast30d: d30.messagesSent,
        messagesReceived: all.messagesReceived,
        messagesReceivedLast30d: d30.messagesReceived,
        messageSegments: all.segments,
        messageSegmentsLast30d: d30.segments,
        totalCalls: all.calls,
        callsLast24h: d1.calls,
        callsLast7d: d7.calls,
        callsLast30d: d30.calls,
        // beyond the public fields: call seconds, lookups and money spent (docs/analytics.md)
        callSeconds: all.callSeconds,
        callSecondsLast30d: d30.callSeconds,
        totalWebhookDeliveries: all.webhooks,
        successfulWebhookDeliveries: all.webhooksSucceeded,
        failedWebhookDeliveries: all.webhooksFailed,
        lookups: all.lookups,
        spentMicros: all.spentMicros,
        spentMicrosLast30d: d30.spentMicros,
      },
      periodStart: periodStart.toISOString(),
      periodEnd: periodEnd.toISOString(),
      balance: { micros: billing.balanceMicros, dollars: billing.balanceMicros / MICROS_PER_DOLLAR, accountId: billing.accountId },
    };
  }
}

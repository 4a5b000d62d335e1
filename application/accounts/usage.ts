import { MICROS_PER_DOLLAR } from '../../domain/account/account.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { ClockPort } from '../ports/clock.port.js';
import type { AccountQueries } from './account-queries.port.js';
import type { UsageMetric, UsageQueries } from './usage.port.js';

/** The self-serve plan's published limits (docs/accounts.md#usage: the number limit, and this service's own limits). */
export const SELF_SERVE_PLAN = {
  name: 'self-serve',
  limits: { messagesPerMonth: 10_000, voiceMinutesPerMonth: 1_000, maxCallDurationMinutes: 60, concurrentCalls: 5 },
} as const;

const day = (d: Date) => d.toISOString().slice(0, 10);
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * 86_400_000);

/** GET /v1/usage: plan, numbers (limit of the billing account), stats from analytics projections, balance. */
export class UsageReport {
  constructor(
    private readonly clock: ClockPort,
    private readonly accounts: AccountQueries,
    private readonly usage: UsageQueries,
  ) {}

  async forAccount(accountId: string) {
    const me = await this.accounts.get(accountId);
    if (!me) throw new DomainError('ACCOUNT_NOT_FOUND', 'Account not found');
    const billing = me.parentAccountId ? await this.accounts.get(me.parentAccountId) : me;
    if (!billing) throw new DomainError('ACCOUNT_NOT_FOUND', 'Account not found');
    const now = this.clock.now();
    const tomorrow = day(addDays(now, 1));
    const windows = async (metric: UsageMetric) => {
      const [total, d1, d7, d30] = await Promise.all([
        this.usage.count(accountId, metric, null, tomorrow),
        this.usage.count(accountId, metric, day(now), tomorrow),
        this.usage.count(accountId, metric, day(addDays(now, -6)), tomorrow),
        this.usage.count(accountId, metric, day(addDays(now, -29)), tomorrow),
      ]);
      return { total, d1, d7, d30 };
    };
    const [messages, sent, received, segments, calls, deliveries, succeeded, failed] = await Promise.all([
      windows('messages'),
      windows('messages_sent'),
      windows('messages_received'),
      windows('message_segments'),
      windows('calls'),
      this.usage.count(accountId, 'webhook_deliveries', null, tomorrow),
      this.usage.count(accountId, 'webhook_deliveries_succeeded', null, tomorrow),
      this.usage.count(accountId, 'webhook_deliveries_failed', null, tomorrow),
    ]);
    const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const periodEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    return {
      plan: { name: SELF_SERVE_PLAN.name, limits: { numbers: billing.numberLimit, ...SELF_SERVE_PLAN.limits } },
      numbers: { used: billing.numbersUsed, limit: billing.numberLimit, remaining: Math.max(0, billing.numberLimit - billing.numbersUsed) },
      stats: {
        totalMessages: messages.total,
        messagesLast24h: messages.d1,
        messagesLast7d: messages.d7,
        messagesLast30d: messages.d30,
        // beyond the public fields: the split by direction and the SMS segments (docs/messaging-encoding.md)
        messagesSent: sent.total,
        messagesSentLast30d: sent.d30,
        messagesReceived: received.total,
        messagesReceivedLast30d: received.d30,
        messageSegments: segments.total,
        messageSegmentsLast30d: segments.d30,
        totalCalls: calls.total,
        callsLast24h: calls.d1,
        callsLast7d: calls.d7,
        callsLast30d: calls.d30,
        totalWebhookDeliveries: deliveries,
        successfulWebhookDeliveries: succeeded,
        failedWebhookDeliveries: failed,
      },
      periodStart: periodStart.toISOString(),
      periodEnd: periodEnd.toISOString(),
      balance: { micros: billing.balanceMicros, dollars: billing.balanceMicros / MICROS_PER_DOLLAR, accountId: billing.accountId },
    };
  }
}

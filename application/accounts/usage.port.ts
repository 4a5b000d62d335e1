/** Metric names counted per account and day by analytics projectors. */
export const USAGE_METRICS = [
  'messages',
  'messages_sent',
  'messages_received',
  'message_segments',
  'calls',
  'webhook_deliveries',
  'webhook_deliveries_succeeded',
  'webhook_deliveries_failed',
] as const;
export type UsageMetric = (typeof USAGE_METRICS)[number];

export interface UsageQueries {
  /** count of `metric` for the account on days in [from, to) (UTC dates, ISO `YYYY-MM-DD`); `from` null = all time */
  count(accountId: string, metric: UsageMetric, from: string | null, to: string): Promise<number>;
}

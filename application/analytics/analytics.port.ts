/**
 * Queries of the analytics read models (docs/analytics.md). Every figure follows the one counting rule of
 * domain/analytics/counting.ts; every query filters on the account.
 */

/** What usage counts, for a day, a month or any span. */
export type UsageCounts = {
  /** texts on credit channels, both directions */
  messages: number;
  messagesSent: number;
  messagesReceived: number;
  /** SMS segments of those texts */
  segments: number;
  /** calls that connected (ended `completed`) */
  calls: number;
  /** their length, from answer to end */
  callSeconds: number;
  /** webhook deliveries, test sends left out */
  webhooks: number;
  webhooksSucceeded: number;
  webhooksFailed: number;
  /** numbers looked up (and charged) */
  lookups: number;
  /** everything charged to the account (its own charges: a sub-account's are its parent's) */
  spentMicros: number;
};

export const zeroCounts = (): UsageCounts => ({
  messages: 0,
  messagesSent: 0,
  messagesReceived: 0,
  segments: 0,
  calls: 0,
  callSeconds: 0,
  webhooks: 0,
  webhooksSucceeded: 0,
  webhooksFailed: 0,
  lookups: 0,
  spentMicros: 0,
});

export type NumberUsage = Readonly<{
  numberId: string;
  phoneNumber: string;
  country: string;
  status: string;
  agentId: string | null;
  agentName: string | null;
  messages: number;
  messagesSent: number;
  messagesReceived: number;
  calls: number;
  callSeconds: number;
}>;

export type AgentUsageRow = Readonly<{
  /** null: messages and calls of no agent */
  agentId: string | null;
  /** null when the agent is not (or no longer) in the account's agents */
  agentName: string | null;
  deleted: boolean;
  messages: number;
  calls: number;
  totalSeconds: number;
}>;

export type Percentiles = Readonly<{ p50: number | null; p90: number | null; p99: number | null; max: number | null }>;

export type MessageDeliveryRow = Readonly<{
  date: string;
  numberId: string;
  phoneNumber: string | null;
  /** outbound texts on credit channels accepted that day */
  sent: number;
  /** delivered (or read) */
  delivered: number;
  failed: number;
  /** neither yet */
  pending: number;
  failuresByCategory: Readonly<Record<string, number>>;
}>;

export type WebhookEndpointRow = Readonly<{
  webhookId: string;
  url: string | null;
  agentId: string | null;
  status: string | null;
  deliveries: number;
  succeeded: number;
  failed: number;
  pending: number;
  attempts: number;
  failedAttempts: number;
  /** how long each attempt took, from the request to the answer (or the failure) */
  attemptLatencyMs: Percentiles;
}>;

export type TurnLatency = Readonly<{ total: Percentiles; requestMs: Percentiles; firstByteMs: Percentiles; speechStartMs: Percentiles }>;

export type CallAgentRow = Readonly<{
  agentId: string | null;
  agentName: string | null;
  deleted: boolean;
  placed: number;
  completed: number;
  failed: number;
  inProgress: number;
  callSeconds: number;
  /** calls by how they ended (`disconnectionReason`) */
  outcomes: Readonly<Record<string, number>>;
  /** agent turns that measured a latency */
  turns: number;
  turnLatencyMs: TurnLatency;
}>;

export interface AnalyticsQueries {
  /** counts per UTC day (`YYYY-MM-DD`) or month (`YYYY-MM`) of the days in [fromDay, toDay); buckets without any are absent */
  series(accountId: string, unit: 'day' | 'month', fromDay: string, toDay: string): Promise<Map<string, UsageCounts>>;
  /** counts of the days in [fromDay, toDay); `fromDay` null: since the beginning */
  totals(accountId: string, fromDay: string | null, toDay: string): Promise<UsageCounts>;
  /** every number of the account (active and released), with its counts over all time */
  byNumber(accountId: string): Promise<NumberUsage[]>;
  /** counts per agent of what happened in [from, to) (instants): the account's live agents, and any other agent or none that has counts */
  byAgent(accountId: string, from: string, to: string): Promise<AgentUsageRow[]>;
  messageDelivery(accountId: string, fromDay: string, toDay: string): Promise<MessageDeliveryRow[]>;
  webhookEndpoints(accountId: string, fromDay: string, toDay: string): Promise<WebhookEndpointRow[]>;
  callsByAgent(accountId: string, fromDay: string, toDay: string): Promise<CallAgentRow[]>;
}

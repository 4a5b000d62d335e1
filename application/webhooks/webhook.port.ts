import type { HistoryItem, WebhookStatus } from '../../domain/webhook/webhook.js';
import type { AttemptResult, FirstAttemptClaim, WebhookDeliveryState } from '../../domain/webhook/webhook-delivery.decider.js';
import { compareCheckpoints } from '../ports/event-store.port.js';

/** A webhook configuration as the API shows it (docs/webhooks.md#configuration) plus our extras. */
export type WebhookView = Readonly<{
  id: string;
  url: string;
  secret: string;
  status: WebhookStatus;
  contextLimit: number;
  timeout: number;
  createdAt: string;
  updatedAt: string;
  /** null for the account's master webhook */
  agentId: string | null;
  consecutiveFailures: number;
  /** public event names it receives (`*`: all; docs/webhooks.md#choosing-events) */
  events: readonly string[];
  /** checkpoint of the event that created it: events from before it are not sent to it */
  createdPosition: string;
}>;

export type DeliveryStatus = 'pending' | 'success' | 'failed';

export type DeliveryAttemptView = Readonly<{
  attempt: number;
  status: 'success' | 'failed';
  httpStatus: number | null;
  errorMessage: string | null;
  responseBody: string | null;
  responseTimeMs: number;
  attemptedAt: string;
  nextRetryAt: string | null;
}>;

/** One delivery (docs/webhooks.md#delivery-log) with every attempt. */
export type DeliveryView = Readonly<{
  id: string;
  messageId: string | null;
  eventType: string | null;
  channel: string | null;
  status: DeliveryStatus;
  httpStatus: number | null;
  errorMessage: string | null;
  responseBody: string | null;
  attemptCount: number;
  lastAttemptAt: string | null;
  nextRetryAt: string | null;
  createdAt: string;
  webhookId: string;
  agentId: string | null;
  /** a test send (`POST /v1/webhooks/test`): listed, never counted (docs/analytics.md#the-counting-rule) */
  test: boolean;
  attempts: DeliveryAttemptView[];
}>;

export type DeliveryCounts = Readonly<{ total: number; success: number; failed: number; pending: number }>;
export type DeliveryStats = DeliveryCounts &
  Readonly<{
    successRate: number;
    byEventType: Record<string, DeliveryCounts>;
    byHour: (DeliveryCounts & { hour: string })[];
  }>;
export type AllTimeStats = Readonly<{ total: number; success: number; failed: number; successRate: number }>;

export interface WebhookQueries {
  /** the account's master webhook */
  master(accountId: string): Promise<WebhookView | null>;
  /** the agent's own webhook */
  ofAgent(accountId: string, agentId: string): Promise<WebhookView | null>;
  byId(accountId: string, webhookId: string): Promise<WebhookView | null>;
  /**
   * The webhooks events about these agents may go to, in one look-up: each agent's own and the account's master
   * (see `pickWebhook`, which picks among them).
   */
  candidates(accountId: string, agentIds: readonly string[]): Promise<WebhookView[]>;
  /** how far the webhook configurations are projected (the checkpoint of the webhooks projector) */
  configCheckpoint(): Promise<string>;
  deliveries(
    accountId: string,
    q: { limit: number; offset: number; since: string | null },
  ): Promise<{ items: DeliveryView[]; total: number }>;
  /** deliveries sent to the agent's own webhook, newest first */
  agentDeliveries(accountId: string, agentId: string, limit: number): Promise<DeliveryView[]>;
  /** one delivery of the account, with its attempts; null when it is not the account's */
  delivery(accountId: string, deliveryId: string): Promise<DeliveryView | null>;
  /** ids of the account's deliveries (test sends left out) that ended failed at or after `since`, oldest first */
  failedSince(accountId: string, since: string, limit: number): Promise<{ ids: string[]; more: boolean }>;
  /** health notices of the account's webhooks, newest first */
  notices(accountId: string, limit: number): Promise<WebhookNoticeView[]>;
  /** counts of the deliveries created in [since, now], test sends left out (docs/analytics.md#the-counting-rule) */
  stats(accountId: string, since: string, now: string): Promise<DeliveryStats>;
  /** counts of every delivery, test sends left out */
  allTime(accountId: string): Promise<AllTimeStats>;
}

/** One signed POST. The adapter signs exactly the bytes it sends (`sha256=` HMAC of `${timestamp}.${body}`). */
export type OutgoingWebhook = Readonly<{
  url: string;
  secret: string;
  /** `X-Webhook-ID`: the delivery id, stable across retries */
  webhookId: string;
  /** `X-Webhook-Timestamp`: Unix seconds (from the Clock port) */
  timestamp: number;
  body: string;
  /** no complete answer within this many milliseconds is a failed attempt */
  deadlineMs: number;
  /** aborts the request (shutdown); the result is then not an outcome to record */
  signal?: AbortSignal;
}>;

export interface WebhookSenderPort {
  send(req: OutgoingWebhook): Promise<AttemptResult>;
}

/** Whether a URL may receive webhooks (scheme, and outside sandbox mode no private addresses). */
export interface WebhookUrlPolicyPort {
  /** null when allowed, else the reason */
  check(url: string): Promise<string | null>;
}

/** Signing secrets: generated, then sealed before they are stored; opened only where the plain value is needed. */
export interface WebhookSecretsPort {
  generate(): string;
  /** the form that goes into events and read models */
  seal(plain: string): string;
  open(stored: string): string;
}

/**
 * Conversation context for payloads (docs/webhooks.md#the-delivery-contract). The messaging capability binds its own adapter; until then
 * there is no history and no state.
 */
/** What one payload asks of its conversation and participant (docs/webhooks.md#the-delivery-contract). */
export type ContextQuery = Readonly<{
  accountId: string;
  /** when null, no history and no state */
  conversationId: string | null;
  /** at most this many recent messages (0: none) */
  limit: number;
  /** the message the payload is about, never part of its own history */
  excludeMessageId: string | null;
  /** when set, the account's contact with this phone number */
  contactNumber: string | null;
}>;

/** What a payload carries of its conversation: recent messages (oldest first), the caller-written state, the contact. */
export type PayloadContext = Readonly<{
  recentHistory: HistoryItem[];
  conversationState: Record<string, unknown> | null;
  /** the account's contact with the query's number, as payloads show it; null when none (or none asked) */
  contact: Readonly<Record<string, unknown>> | null;
}>;

export interface ConversationContextPort {
  /**
   * The context of every payload of a dispatch batch, in the queries' order, looked up for all of them at once: a
   * few statements per batch, not three per payload (docs/webhooks.md#payload-context).
   */
  contexts(queries: readonly ContextQuery[]): Promise<PayloadContext[]>;
}

/** An attempt that is due, claimed by one worker until `claimedUntil`. */
export type ClaimedAttempt = Readonly<{ deliveryId: string; accountId: string; attempt: number; claimedUntil: string }>;

/** The retry timeline: due attempts, claimed with a lease so that one attempt is in flight at most once. */
export interface DueAttemptsPort {
  claim(o: { now: Date; limit: number; workerId: string; leaseMs: number }): Promise<ClaimedAttempt[]>;
}

/** A claimed attempt with what sending it needs: the delivery as its stream tells it, and its webhook. */
export type PreparedAttempt = Readonly<{
  claim: ClaimedAttempt;
  stream: string;
  state: WebhookDeliveryState;
  revision: bigint | 'no_stream';
  webhook: WebhookView | null;
}>;

/**
 * The delivery worker of this process, as the dispatcher sees it: first attempts are handed to it as they are
 * scheduled, instead of waiting for the timeline's projector and a claim (docs/webhooks.md#the-first-attempt-handed-over).
 */
export interface AttemptHandoverPort {
  /**
   * Sets aside up to `wanted` of the worker's free slots; null when it takes none (stopped, or full). The
   * deliveries scheduled with the claim it gives are handed over with `handOver`; what is left is given back there.
   */
  reserve(wanted: number): Readonly<{ count: number; claim: FirstAttemptClaim }> | null;
  /** Sends these (each scheduled with the reserved claim) and frees the `reserved` slots set aside for them. */
  handOver(attempts: readonly PreparedAttempt[], reserved: number): void;
}

/**
 * Where an event about `agentId` at checkpoint `asOf` goes: the agent's own webhook, else the account's master,
 * else nowhere; a webhook created after the event does not count.
 */
export function pickWebhook(candidates: readonly WebhookView[], agentId: string | null, asOf: string): WebhookView | null {
  const existed = (w: WebhookView | undefined) => (w && compareCheckpoints(w.createdPosition, asOf) <= 0 ? w : null);
  return (
    existed(agentId ? candidates.find((w) => w.agentId === agentId) : undefined) ?? existed(candidates.find((w) => w.agentId === null))
  );
}
/** Where to write to an account (its owner's e-mail address, else its parent's); null when it has none. */
export interface AccountAddressesPort {
  addressOf(accountId: string): Promise<string | null>;
}

/** A notice about a webhook's health in the delivery log (docs/webhooks.md#notices). */
export type WebhookNoticeView = Readonly<{
  id: string;
  kind: 'disable_warning' | 'disabled' | 'recovered';
  webhookId: string;
  agentId: string | null;
  url: string | null;
  consecutiveFailures: number | null;
  message: string;
  /** for a warning: `pending` until the e-mail went out, `sent`, or `no_address` */
  email: Readonly<{ status: 'pending' | 'sent' | 'no_address'; to: string | null }> | null;
  at: string;
}>;

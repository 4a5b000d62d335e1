import { type CallEvent, type CallState, callDecider } from '../../domain/call/call.decider.js';
import { callStream } from '../../domain/call/call.js';
import { type ConversationEvent, type ConversationState, conversationDecider } from '../../domain/conversation/conversation.decider.js';
import { type MessageEvent, type MessageState, messageDecider } from '../../domain/message/message.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import { streams } from '../../domain/shared/streams.js';
import { assertNever, type Decider, type Event } from '../../domain/shared/types.js';
import {
  type WebhookDeliveryEvent,
  type WebhookDeliveryState,
  webhookDeliveryDecider,
} from '../../domain/webhook/webhook-delivery.decider.js';
import type { EventStorePort, RecordedEvent } from '../ports/event-store.port.js';

/**
 * Audit replay (docs/audit.md): the history of a message, a call, a conversation or a webhook delivery is its
 * event stream, read as it is stored and folded with the aggregate's own `evolve`, so "what happened" and "what
 * it was at 10:02" come from the facts themselves rather than from a read model. This is the one query path that
 * reads the event store: the history IS the stream, and no projection of it could say more.
 */
export const HISTORY_KINDS = ['message', 'call', 'conversation', 'webhook_delivery'] as const;
export type HistoryKind = (typeof HISTORY_KINDS)[number];

/** One step of a history: the fact as recorded, who did it and why, and the resource's status once it applied. */
export type HistoryEntry = Readonly<{
  /** 1, 2, 3, … across the whole history */
  seq: number;
  stream: string;
  revision: number;
  eventId: string;
  type: string;
  /** when the fact was recorded */
  time: string;
  /** who did it: `key:<keyId>`, `admin`, `cli`, `system:<component>`, `anonymous` */
  actor: string;
  requestId: string | null;
  correlationId: string;
  /** the event that caused this one (a process manager's reaction), if any */
  causationId: string | null;
  /** the resource's status after this step */
  status: string;
  data: Readonly<Record<string, unknown>>;
}>;

export type History = Readonly<{
  kind: HistoryKind;
  id: string;
  stream: string;
  /** the instant asked for (`?at=`), or null for now */
  at: string | null;
  /** the status as of `at` (or now); null when it did not exist yet then */
  status: string | null;
  /** the record as of `at`, folded from the stream; null when it did not exist yet then */
  record: Readonly<Record<string, unknown>> | null;
  events: readonly HistoryEntry[];
}>;

/** Where a message was recorded when its own stream has not started yet (accepted, not yet queued). */
export interface MessageLocatorPort {
  conversationOf(accountId: string, messageId: string): Promise<string | null>;
}

/**
 * How one kind of history reads: its decider, how to tell its account, and a view that follows the aggregate's
 * state through the events (the record shown as of an instant). `step` gets the state `evolve` produced.
 */
type Audit<E extends Event, S, V> = Readonly<{
  kind: HistoryKind;
  what: string;
  notFound: 'MESSAGE_NOT_FOUND' | 'CALL_NOT_FOUND' | 'CONVERSATION_NOT_FOUND' | 'WEBHOOK_DELIVERY_NOT_FOUND';
  stream: (id: string) => string;
  decider: Pick<Decider<unknown, E, S>, 'initialState' | 'evolve'>;
  /** the account the resource belongs to, from its folded state or its first event */
  accountOf: (s: S, first: RecordedEvent) => string | null;
  initial: (id: string) => V;
  step: (v: V, e: RecordedEvent<E>, s: S) => V;
  /** a step of another stream that the history shows first (a message's record on its conversation) */
  lead?: (v: V, e: RecordedEvent) => V;
  status: (v: V, s: S) => string | null;
}>;

type MessageView = {
  messageId: string;
  conversationId: string | null;
  direction: string | null;
  channel: string | null;
  status: string | null;
  from: string | null;
  to: string | null;
  body: string | null;
  failureReason: string | null;
  failureCategory: string | null;
  errorCode: string | null;
  retryable: boolean | null;
  acceptedAt: string | null;
  queuedAt: string | null;
  sentAt: string | null;
  deliveredAt: string | null;
  readAt: string | null;
  failedAt: string | null;
};

const messageAudit: Audit<MessageEvent, MessageState, MessageView> = {
  kind: 'message',
  what: 'Message',
  notFound: 'MESSAGE_NOT_FOUND',
  stream: streams.message,
  decider: messageDecider,
  // a message's events carry the account in their metadata (its state does not keep it)
  accountOf: (_s, first) => first.metadata.accountId,
  initial: (messageId) => ({
    messageId,
    conversationId: null,
    direction: null,
    channel: null,
    status: null,
    from: null,
    to: null,
    body: null,
    failureReason: null,
    failureCategory: null,
    errorCode: null,
    retryable: null,
    acceptedAt: null,
    queuedAt: null,
    sentAt: null,
    deliveredAt: null,
    readAt: null,
    failedAt: null,
  }),
  lead: (v, e) => acceptedView(v, e),
  step: (v, e, s) => {
    const status = s.exists ? s.status : v.status;
    switch (e.type) {
      case 'MessageQueued':
        return {
          ...v,
          messageId: e.data.messageId,
          conversationId: e.data.conversationId,
          direction: 'outbound',
          channel: e.data.channel,
          from: e.data.from,
          to: e.data.to,
          body: e.data.body,
          acceptedAt: v.acceptedAt ?? e.data.acceptedAt,
          queuedAt: e.data.queuedAt,
          status,
        };
      case 'MessageReceived':
        return {
          ...v,
          messageId: e.data.messageId,
          conversationId: e.data.conversationId,
          direction: 'inbound',
          channel: e.data.channel,
          from: e.data.from,
          to: e.data.to,
          body: e.data.body,
          acceptedAt: v.acceptedAt ?? e.data.receivedAt,
          status,
        };
      case 'MessageSubmitted':
        return { ...v, sentAt: e.data.submittedAt, status };
      case 'MessageFailed':
        return {
          ...v,
          status,
          failureReason: e.data.failureReason,
          failureCategory: e.data.failureCategory,
          errorCode: e.data.errorCode,
          retryable: e.data.retryable,
          failedAt: e.data.failedAt,
        };
      case 'MessageDelivered':
        return { ...v, deliveredAt: e.data.deliveredAt, status };
      case 'MessageRead':
        return { ...v, readAt: e.data.readAt, status };
      default:
        return { ...v, status };
    }
  },
  status: (v) => v.status,
};

type CallView = {
  callId: string;
  direction: string | null;
  agentId: string | null;
  numberId: string | null;
  from: string | null;
  to: string | null;
  status: string | null;
  phase: string | null;
  answeredBy: string | null;
  turns: number;
  disconnectionReason: string | null;
  startedAt: string | null;
  answeredAt: string | null;
  endedAt: string | null;
  durationSeconds: number | null;
  recordingAvailable: boolean;
};

const callAudit: Audit<CallEvent, CallState, CallView> = {
  kind: 'call',
  what: 'Call',
  notFound: 'CALL_NOT_FOUND',
  stream: callStream,
  decider: callDecider,
  accountOf: (s) => (s.status === 'none' ? null : s.accountId),
  initial: (callId) => ({
    callId,
    direction: null,
    agentId: null,
    numberId: null,
    from: null,
    to: null,
    status: null,
    phase: null,
    answeredBy: null,
    turns: 0,
    disconnectionReason: null,
    startedAt: null,
    answeredAt: null,
    endedAt: null,
    durationSeconds: null,
    recordingAvailable: false,
  }),
  step: (v, e, s) => {
    const phase = s.status === 'live' ? s.phase : s.status === 'ended' ? 'ended' : null;
    const base = { ...v, phase };
    switch (e.type) {
      case 'CallPlaced':
        return {
          ...base,
          callId: e.data.callId,
          direction: e.data.direction,
          agentId: e.data.agentId,
          numberId: e.data.numberId,
          from: e.data.from,
          to: e.data.to,
          status: 'in-progress',
          startedAt: e.data.placedAt,
        };
      case 'CallAnswered':
        return { ...base, answeredBy: e.data.answeredBy, answeredAt: e.data.at };
      case 'CallerTurnRecorded':
      case 'AgentTurnRecorded':
        return { ...base, turns: v.turns + 1 };
      case 'CallEnded':
        return {
          ...base,
          status: 'completed',
          disconnectionReason: e.data.reason,
          endedAt: e.data.endedAt,
          durationSeconds: e.data.durationSeconds,
        };
      case 'CallFailed':
        return { ...base, status: 'failed', disconnectionReason: e.data.reason, endedAt: e.data.endedAt, durationSeconds: 0 };
      case 'CallRecordingAvailable':
        return { ...base, recordingAvailable: true };
      default:
        return base;
    }
  },
  status: (v) => v.status,
};

type ConversationView = {
  conversationId: string;
  numberId: string | null;
  participant: string | null;
  isGroup: boolean;
  groupName: string | null;
  messageCount: number;
  inboundCount: number;
  outboundSinceReply: number;
  reengagementLocked: boolean;
  conversationState: Readonly<Record<string, unknown>> | null;
  lastMessageAt: string | null;
  createdAt: string | null;
};

/**
 * A conversation's status as its caps see it (docs/messaging.md#caps): `awaiting_reply` until the participant
 * has written, `reengagement_locked` after the one message allowed after a quiet spell, else `active`.
 */
const conversationStatus = (s: ConversationState): string | null =>
  !s.exists ? null : s.reengagementLocked ? 'reengagement_locked' : s.inboundCount === 0 ? 'awaiting_reply' : 'active';

const conversationAudit: Audit<ConversationEvent, ConversationState, ConversationView> = {
  kind: 'conversation',
  what: 'Conversation',
  notFound: 'CONVERSATION_NOT_FOUND',
  stream: streams.conversation,
  decider: conversationDecider,
  accountOf: (s) => (s.exists ? s.accountId : null),
  initial: (conversationId) => ({
    conversationId,
    numberId: null,
    participant: null,
    isGroup: false,
    groupName: null,
    messageCount: 0,
    inboundCount: 0,
    outboundSinceReply: 0,
    reengagementLocked: false,
    conversationState: null,
    lastMessageAt: null,
    createdAt: null,
  }),
  step: (v, _e, s) =>
    s.exists
      ? {
          conversationId: s.conversationId,
          numberId: s.numberId,
          participant: s.participant,
          isGroup: s.isGroup,
          groupName: s.groupName,
          messageCount: s.messageCount,
          inboundCount: s.inboundCount,
          outboundSinceReply: s.outboundSinceReply,
          reengagementLocked: s.reengagementLocked,
          conversationState: s.conversationState,
          lastMessageAt: s.lastMessageAt,
          createdAt: s.createdAt,
        }
      : v,
  status: (_v, s) => conversationStatus(s),
};

type DeliveryView = {
  deliveryId: string;
  webhookId: string | null;
  eventType: string | null;
  status: string | null;
  test: boolean;
  attempts: number;
  lastHttpStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  failureReason: string | null;
  createdAt: string | null;
  finishedAt: string | null;
};

/** the delivery log's names for the aggregate's statuses (docs/webhooks.md#delivery-log) */
const deliveryStatus = (s: WebhookDeliveryState): string | null =>
  s.status === 'none' ? null : s.status === 'succeeded' ? 'success' : s.status;

const deliveryAudit: Audit<WebhookDeliveryEvent, WebhookDeliveryState, DeliveryView> = {
  kind: 'webhook_delivery',
  what: 'Delivery',
  notFound: 'WEBHOOK_DELIVERY_NOT_FOUND',
  stream: streams.webhookDelivery,
  decider: webhookDeliveryDecider,
  accountOf: (s) => (s.status === 'none' ? null : s.accountId),
  initial: (deliveryId) => ({
    deliveryId,
    webhookId: null,
    eventType: null,
    status: null,
    test: false,
    attempts: 0,
    lastHttpStatus: null,
    lastError: null,
    nextAttemptAt: null,
    failureReason: null,
    createdAt: null,
    finishedAt: null,
  }),
  step: (v, e, s) => {
    const base = { ...v, status: deliveryStatus(s), nextAttemptAt: s.status === 'pending' ? s.nextAttemptAt : null };
    switch (e.type) {
      case 'WebhookDeliveryScheduled':
        return {
          ...base,
          deliveryId: e.data.deliveryId,
          webhookId: e.data.webhookId,
          eventType: e.data.eventType,
          test: e.data.test,
          createdAt: e.data.scheduledAt,
        };
      case 'WebhookAttemptSucceeded':
        return { ...base, attempts: e.data.attempt, lastHttpStatus: e.data.httpStatus, lastError: null };
      case 'WebhookAttemptFailed':
        return { ...base, attempts: e.data.attempt, lastHttpStatus: e.data.httpStatus, lastError: e.data.errorMessage };
      case 'WebhookDeliverySucceeded':
        return { ...base, finishedAt: e.data.deliveredAt, failureReason: null };
      case 'WebhookDeliveryFailed':
        return { ...base, finishedAt: e.data.failedAt, failureReason: e.data.reason };
      case 'WebhookDeliveryRetryRequested':
        return { ...base, finishedAt: null, failureReason: null };
      default:
        return base;
    }
  },
  status: (v) => v.status,
};

/** The category part of a stream name, and which history kind reads it. */
export const kindOfStream = (stream: string): { kind: HistoryKind; id: string } | null => {
  const i = stream.indexOf('-');
  if (i < 0) return null;
  const category = stream.slice(0, i);
  const id = stream.slice(i + 1);
  return (HISTORY_KINDS as readonly string[]).includes(category) ? { kind: category as HistoryKind, id } : null;
};

const entry = (e: RecordedEvent, seq: number, status: string | null): HistoryEntry => ({
  seq,
  stream: e.streamName,
  revision: Number(e.streamRevision),
  eventId: e.id,
  type: e.type,
  time: e.createdAt,
  actor: e.metadata.actor,
  requestId: e.metadata.requestId,
  correlationId: e.metadata.correlationId,
  causationId: e.metadata.causationId,
  status: status ?? 'none',
  data: e.data,
});

/** Who reads: an account (its own resources only) or the operator (any). */
type Reader = { accountId: string } | 'operator';

/** Reads histories from the event store (docs/audit.md). */
export class HistoryService {
  constructor(
    private readonly store: EventStorePort,
    private readonly messages: MessageLocatorPort,
  ) {}

  /**
   * The history of one resource of the account, every event in order, or as of `at` (the events recorded at or
   * before that instant). Another account's resource, and an unknown id, answer the kind's 404.
   */
  async history(accountId: string, kind: HistoryKind, id: string, at: string | null = null): Promise<History> {
    return this.read({ accountId }, kind, id, at);
  }

  /** The same for the operator (`npm run cli -- history`): any account's resource. */
  async forOperator(kind: HistoryKind, id: string, at: string | null = null): Promise<History> {
    return this.read('operator', kind, id, at);
  }

  private async read(who: Reader, kind: HistoryKind, id: string, at: string | null): Promise<History> {
    const accountId = who === 'operator' ? null : who.accountId;
    switch (kind) {
      case 'message': {
        const own = await this.store.readStream(streams.message(id));
        // a message is first recorded on its conversation; its own stream starts when it is queued or received
        return this.fold(messageAudit, who, id, at, await this.acceptance(accountId, id, own), own);
      }
      case 'call':
        return this.fold(callAudit, who, id, at, [], await this.store.readStream(callStream(id)));
      case 'conversation':
        return this.fold(conversationAudit, who, id, at, [], await this.store.readStream(streams.conversation(id)));
      case 'webhook_delivery':
        return this.fold(deliveryAudit, who, id, at, [], await this.store.readStream(streams.webhookDelivery(id)));
      default:
        return assertNever(kind);
    }
  }

  private fold<E extends Event, S, V extends object>(
    a: Audit<E, S, V>,
    who: Reader,
    id: string,
    at: string | null,
    lead: readonly RecordedEvent[],
    raw: readonly RecordedEvent[],
  ): History {
    // the stream name fixes which aggregate's events these are
    const own = raw as readonly RecordedEvent<E>[];
    const first = lead[0] ?? own[0];
    const notFound = () => new DomainError(a.notFound, `${a.what} not found`);
    if (!first) throw notFound();
    const now = own.reduce(a.decider.evolve, a.decider.initialState());
    if (who !== 'operator' && a.accountOf(now, own[0] ?? first) !== who.accountId) throw notFound();

    const until = at === null ? null : Date.parse(at);
    const shown = (e: RecordedEvent) => until === null || Date.parse(e.createdAt) <= until;
    let state = a.decider.initialState();
    let view = a.initial(id);
    const events: HistoryEntry[] = [];
    for (const e of lead.filter(shown)) {
      view = a.lead ? a.lead(view, e) : view;
      events.push(entry(e, events.length + 1, a.status(view, state)));
    }
    for (const e of own.filter(shown)) {
      state = a.decider.evolve(state, e);
      view = a.step(view, e, state);
      events.push(entry(e, events.length + 1, a.status(view, state)));
    }
    const existed = events.length > 0;
    return {
      kind: a.kind,
      id,
      stream: a.stream(id),
      at,
      status: existed ? a.status(view, state) : null,
      record: existed ? (view as Readonly<Record<string, unknown>>) : null,
      events,
    };
  }

  /** The message's acceptance (outbound) or receipt (inbound) on its conversation's stream. */
  private async acceptance(accountId: string | null, messageId: string, own: readonly RecordedEvent[]): Promise<RecordedEvent[]> {
    const first = own[0] as RecordedEvent<MessageEvent> | undefined;
    const conversationId =
      first && (first.type === 'MessageQueued' || first.type === 'MessageReceived')
        ? first.data.conversationId
        : accountId
          ? await this.messages.conversationOf(accountId, messageId)
          : null;
    if (!conversationId) return [];
    const events = (await this.store.readStream(streams.conversation(conversationId))) as RecordedEvent<ConversationEvent>[];
    return events.filter(
      (e) => (e.type === 'OutboundMessageAccepted' || e.type === 'InboundMessageReceived') && e.data.messageId === messageId,
    );
  }
}

/** The message's view after its record on the conversation: accepted (outbound) or received (inbound). */
function acceptedView(v: MessageView, raw: RecordedEvent): MessageView {
  const e = raw as RecordedEvent<ConversationEvent>;
  if (e.type === 'OutboundMessageAccepted')
    return {
      ...v,
      conversationId: e.data.conversationId,
      direction: 'outbound',
      channel: e.data.channel,
      from: e.data.from,
      to: e.data.to,
      body: e.data.body,
      acceptedAt: e.data.acceptedAt,
      status: 'accepted',
    };
  if (e.type === 'InboundMessageReceived')
    return {
      ...v,
      conversationId: e.data.conversationId,
      direction: 'inbound',
      channel: e.data.channel,
      from: e.data.from,
      to: e.data.to,
      body: e.data.body,
      acceptedAt: e.data.receivedAt,
      status: 'received',
    };
  return v;
}

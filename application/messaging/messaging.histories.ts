import {
  type ConversationEvent,
  type ConversationState,
  conversationDecider,
  conversationStream,
} from '../../domain/conversation/conversation.decider.js';
import { type MessageEvent, type MessageState, messageDecider, messageStream } from '../../domain/message/message.decider.js';
import { defineHistory, type HistoryView } from '../audit/history.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { ConversationQueries } from './conversation-queries.port.js';

/** The histories messaging contributes (docs/audit.md): a message's and a conversation's. */

type MessageHistoryView = {
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

/**
 * A message's history: its own stream, after its record on its conversation (accepted, or received), which is where it
 * was first recorded; the message is found on its conversation through the read model while its own stream has not
 * started yet.
 */
export const messageHistory = (conversations: Pick<ConversationQueries, 'message'>): HistoryView =>
  defineHistory<MessageEvent, MessageState, MessageHistoryView>({
    kind: 'message',
    what: 'Message',
    notFound: 'MESSAGE_NOT_FOUND',
    stream: messageStream,
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
    lead: {
      // a message is first recorded on its conversation; its own stream starts when it is queued or received
      events: async (store, who, messageId, own) => {
        const first = own[0];
        const conversationId =
          first && (first.type === 'MessageQueued' || first.type === 'MessageReceived')
            ? first.data.conversationId
            : who !== 'operator'
              ? ((await conversations.message(who.accountId, messageId))?.conversationId ?? null)
              : null;
        if (!conversationId) return [];
        const events = (await store.readStream(conversationStream(conversationId))) as RecordedEvent<ConversationEvent>[];
        return events.filter(
          (e) => (e.type === 'OutboundMessageAccepted' || e.type === 'InboundMessageReceived') && e.data.messageId === messageId,
        );
      },
      step: (v, e) => acceptedView(v, e),
    },
    step: (v, e, s) => {
      const status = s.exists ? s.status : v.status;
      switch (e.type) {
        case 'MessageQueued':
          return {
            ...v,
            ...recorded(e.data, 'outbound'),
            messageId: e.data.messageId,
            acceptedAt: v.acceptedAt ?? e.data.acceptedAt,
            queuedAt: e.data.queuedAt,
            status,
          };
        case 'MessageReceived':
          return {
            ...v,
            ...recorded(e.data, 'inbound'),
            messageId: e.data.messageId,
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
  });

type ConversationHistoryView = {
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

/** A conversation's history: its stream, the caps' status after each step. */
export const conversationHistory: HistoryView = defineHistory<ConversationEvent, ConversationState, ConversationHistoryView>({
  kind: 'conversation',
  what: 'Conversation',
  notFound: 'CONVERSATION_NOT_FOUND',
  stream: conversationStream,
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
});

/** What every record of a message says of it, whichever stream it is on. */
const recorded = (
  d: Readonly<{ conversationId: string; channel: string; from: string; to: string; body: string }>,
  direction: 'inbound' | 'outbound',
) => ({ conversationId: d.conversationId, direction, channel: d.channel, from: d.from, to: d.to, body: d.body });

/** The message's view after its record on the conversation: accepted (outbound) or received (inbound). */
function acceptedView(v: MessageHistoryView, raw: RecordedEvent): MessageHistoryView {
  const e = raw as RecordedEvent<ConversationEvent>;
  if (e.type === 'OutboundMessageAccepted')
    return {
      ...v,
      ...recorded(e.data, 'outbound'),
      acceptedAt: e.data.acceptedAt,
      status: 'accepted',
    };
  if (e.type === 'InboundMessageReceived')
    return {
      ...v,
      ...recorded(e.data, 'inbound'),
      acceptedAt: e.data.receivedAt,
      status: 'received',
    };
  return v;
}

import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/** The stream of one message's lifecycle: `<category>-<id>` (docs/event-store.md#aggregates-and-events). */
export const messageStream = (id: string) => `message-${id}`;

/**
 * One text message, `message-<id>` (docs/messaging.md#message-lifecycle). Outbound:
 *   (accepted on its conversation) -> queued -> sent -> delivered -> read, or failed at any point before a final state.
 * Inbound: received. Status only moves forward: `failed` and `read` are final, `delivered` moves only to `read`.
 * Every carrier receipt is kept as a fact, whether it moved the status, came too late, or came twice: that
 * history is what the audit replay of a message reads.
 */
export type MessageStatus = 'queued' | 'sent' | 'delivered' | 'read' | 'failed' | 'received';
export type ReceiptStatus = 'sent' | 'delivered' | 'read' | 'failed';
export type Direction = 'inbound' | 'outbound';

const RANK: Record<MessageStatus, number> = { queued: 1, sent: 2, delivered: 3, read: 4, failed: 5, received: 5 };
export const isFinal = (s: MessageStatus): boolean => s === 'failed' || s === 'read' || s === 'received';

export type Failure = Readonly<{
  failureReason: string;
  errorCode: string | null;
  failureCategory: string;
  retryable: boolean;
}>;

type Ref = { messageId: string };
export type MessageFacts = Ref & {
  conversationId: string;
  numberId: string;
  agentId: string | null;
  from: string;
  to: string;
  recipients: readonly string[];
  body: string;
  mediaUrls: readonly string[];
  channel: string;
  encoding: 'GSM-7' | 'UCS-2' | null;
  segments: number | null;
  replyToMessageId: string | null;
  kind: 'message' | 'auto_reply';
  acceptedAt: string;
};
export type InboundFacts = Ref & {
  conversationId: string;
  numberId: string;
  agentId: string | null;
  from: string;
  to: string;
  body: string;
  mediaUrls: readonly string[];
  channel: string;
  encoding: 'GSM-7' | 'UCS-2' | null;
  segments: number | null;
  carrierMessageId: string;
  receivedAt: string;
};
export type Receipt = Readonly<{
  receiptId: string;
  carrierMessageId: string;
  status: ReceiptStatus;
  at: string;
  failure: Failure | null;
}>;
export type Reaction = Readonly<{ reactionId: string; reactionType: string; direction: Direction; fromNumber: string }>;

export type MessageCommand =
  | Command<'Queue', MessageFacts>
  | Command<'Receive', InboundFacts>
  | Command<'RecordSubmission', Ref & { carrierMessageIds: readonly string[] }>
  | Command<'RecordSubmissionError', Ref & { error: string }>
  | Command<'Fail', Ref & Failure>
  | Command<'RecordReceipt', Ref & Receipt>
  | Command<'React', Ref & Reaction>;

export type MessageEvent =
  | Event<'MessageQueued', MessageFacts & { queuedAt: string }>
  | Event<'MessageReceived', InboundFacts>
  | Event<'MessageSubmitted', Ref & { carrierMessageIds: readonly string[]; submittedAt: string }>
  | Event<'MessageSubmissionErrored', Ref & { attempt: number; error: string; at: string }>
  | Event<'MessageFailed', Ref & Failure & { source: 'platform' | 'carrier'; failedAt: string }>
  | Event<'MessageReceiptRecorded', Ref & Receipt & { outcome: 'applied' | 'stale' | 'duplicate'; recordedAt: string }>
  | Event<'MessageDelivered', Ref & { deliveredAt: string }>
  | Event<'MessageRead', Ref & { readAt: string }>
  | Event<
      'MessageReactionAdded',
      Ref &
        Reaction & {
          conversationId: string;
          numberId: string;
          agentId: string | null;
          /** the channel of the message reacted to (`sms` for reactions recorded before channels existed) */
          channel: string;
          messageBody: string;
          messageMediaUrls: readonly string[];
          createdAt: string;
        }
    >;

export type MessageState =
  | { exists: false }
  | {
      exists: true;
      messageId: string;
      direction: Direction;
      status: MessageStatus;
      conversationId: string;
      numberId: string;
      agentId: string | null;
      channel: string;
      body: string;
      mediaUrls: readonly string[];
      submissionErrors: number;
      receiptIds: ReadonlySet<string>;
      reactionIds: ReadonlySet<string>;
    };

const notFound = () => new DomainError('MESSAGE_NOT_FOUND', 'Message not found');

export const messageDecider: Decider<MessageCommand, MessageEvent, MessageState> = {
  initialState: () => ({ exists: false }),

  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    switch (cmd.type) {
      case 'Queue':
        return s.exists ? [] : [{ type: 'MessageQueued', data: { ...cmd.data, queuedAt: now } }];
      case 'Receive':
        return s.exists ? [] : [{ type: 'MessageReceived', data: cmd.data }];
    }
    if (!s.exists) throw notFound();
    const d = cmd.data;
    switch (cmd.type) {
      case 'RecordSubmission':
        if (s.status !== 'queued') return [];
        return [
          { type: 'MessageSubmitted', data: { messageId: d.messageId, carrierMessageIds: cmd.data.carrierMessageIds, submittedAt: now } },
        ];
      case 'RecordSubmissionError':
        if (s.status !== 'queued') return [];
        return [
          {
            type: 'MessageSubmissionErrored',
            data: { messageId: d.messageId, attempt: s.submissionErrors + 1, error: cmd.data.error, at: now },
          },
        ];
      case 'Fail': {
        if (s.direction !== 'outbound' || isFinal(s.status) || s.status === 'delivered') return [];
        const { failureReason, errorCode, failureCategory, retryable } = cmd.data;
        return [
          {
            type: 'MessageFailed',
            data: { messageId: d.messageId, failureReason, errorCode, failureCategory, retryable, source: 'platform', failedAt: now },
          },
        ];
      }
      case 'RecordReceipt': {
        const r = cmd.data;
        const base = {
          messageId: r.messageId,
          receiptId: r.receiptId,
          carrierMessageId: r.carrierMessageId,
          status: r.status,
          at: r.at,
          failure: r.failure,
          recordedAt: now,
        };
        if (s.receiptIds.has(r.receiptId)) return [{ type: 'MessageReceiptRecorded', data: { ...base, outcome: 'duplicate' } }];
        if (!advances(s.status, r.status)) return [{ type: 'MessageReceiptRecorded', data: { ...base, outcome: 'stale' } }];
        const out: MessageEvent[] = [{ type: 'MessageReceiptRecorded', data: { ...base, outcome: 'applied' } }];
        if (r.status === 'delivered') out.push({ type: 'MessageDelivered', data: { messageId: r.messageId, deliveredAt: r.at } });
        if (r.status === 'read') {
          // a read message was delivered: a read receipt that overtook the delivery receipt records both, at the
          // read's time, and the delivery receipt arriving later is stale (docs/messaging.md#receipts)
          if (RANK[s.status] < RANK.delivered) out.push({ type: 'MessageDelivered', data: { messageId: r.messageId, deliveredAt: r.at } });
          out.push({ type: 'MessageRead', data: { messageId: r.messageId, readAt: r.at } });
        }
        if (r.status === 'failed') {
          const f = r.failure ?? {
            failureReason: 'The carrier reported an unknown delivery error.',
            errorCode: null,
            failureCategory: 'unknown',
            retryable: false,
          };
          out.push({ type: 'MessageFailed', data: { messageId: r.messageId, ...f, source: 'carrier', failedAt: r.at } });
        }
        return out;
      }
      case 'React':
        if (s.reactionIds.has(cmd.data.reactionId)) return [];
        return [
          {
            type: 'MessageReactionAdded',
            data: {
              ...cmd.data,
              conversationId: s.conversationId,
              numberId: s.numberId,
              agentId: s.agentId,
              channel: s.channel,
              messageBody: s.body,
              messageMediaUrls: s.mediaUrls,
              createdAt: now,
            },
          },
        ];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'MessageQueued':
      case 'MessageReceived': {
        const inbound = e.type === 'MessageReceived';
        return {
          exists: true,
          messageId: e.data.messageId,
          direction: inbound ? 'inbound' : 'outbound',
          status: inbound ? 'received' : 'queued',
          conversationId: e.data.conversationId,
          numberId: e.data.numberId,
          agentId: e.data.agentId,
          channel: e.data.channel,
          body: e.data.body,
          mediaUrls: e.data.mediaUrls,
          submissionErrors: 0,
          receiptIds: new Set(),
          reactionIds: new Set(),
        };
      }
    }
    if (!s.exists) return s;
    switch (e.type) {
      case 'MessageSubmitted':
        return { ...s, status: 'sent' };
      case 'MessageSubmissionErrored':
        return { ...s, submissionErrors: e.data.attempt };
      case 'MessageFailed':
        return { ...s, status: 'failed' };
      case 'MessageReceiptRecorded': {
        const receiptIds = new Set(s.receiptIds).add(e.data.receiptId);
        // a `sent` receipt moves a queued message on; delivered/read/failed have their own events
        const status = e.data.outcome === 'applied' && e.data.status === 'sent' ? 'sent' : s.status;
        return { ...s, receiptIds, status };
      }
      case 'MessageDelivered':
        return { ...s, status: 'delivered' };
      case 'MessageRead':
        return { ...s, status: 'read' };
      case 'MessageReactionAdded':
        return { ...s, reactionIds: new Set(s.reactionIds).add(e.data.reactionId) };
      default:
        return assertNever(e);
    }
  },
};

/** Whether a receipt moves the status forward (never out of a final state; `failed` never after `delivered`). */
export function advances(current: MessageStatus, reported: ReceiptStatus): boolean {
  if (isFinal(current)) return false;
  if (reported === 'failed') return current !== 'delivered';
  return RANK[reported] > RANK[current];
}

export const messageEventTypes = [
  'MessageQueued',
  'MessageReceived',
  'MessageSubmitted',
  'MessageSubmissionErrored',
  'MessageFailed',
  'MessageReceiptRecorded',
  'MessageDelivered',
  'MessageRead',
  'MessageReactionAdded',
] as const satisfies readonly MessageEvent['type'][];

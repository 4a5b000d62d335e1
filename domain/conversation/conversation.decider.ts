import { type SessionSend, sessionSendRefusal } from '../chatapp/session-window.js';
import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import { AWAITING_REPLY_LIMIT, addDays, type ConsentKeyword, INACTIVITY_DAYS } from './rules.js';

/** The stream of a conversation: the acceptance of every message sent or received on it: `<category>-<id>` (docs/event-store.md#aggregates-and-events). */
export const conversationStream = (id: string) => `conversation-${id}`;

/**
 * A conversation between one of the platform's numbers and a participant (or a group), `conversation-<id>`.
 * It owns the per-conversation sending rules (docs/messaging.md#caps): awaiting a first reply, the streak of
 * messages without a reply, the re-engagement lock after a quiet spell, and inbound-only numbers. Every message
 * sent or received is first recorded here (the acceptance); the message's own stream follows.
 *
 * A conversation has one channel (docs/messaging.md#channels): `native` (texts: SMS and MMS, under the caps above)
 * or `chatapp` (the chat platform's messages, under its session window instead of the caps: docs/chatapp.md).
 */
export type Channel = 'sms' | 'mms' | 'chatapp' | 'imessage';
/** `imessage`: the rich-messaging channel's conversations, under the caps of texts (docs/rich-messaging.md#sending) */
export type ConversationChannel = 'native' | 'chatapp' | 'imessage';
export type OutboundKind = 'message' | 'auto_reply';
/** The caps of texts (docs/messaging.md#caps): the account's streak limit, and whether the number is inbound-only. */
export type CapRules = { streakLimit: number; inboundOnly: boolean };

type Ref = { conversationId: string };
type Party = {
  numberId: string;
  /** the platform's number (E.164) */
  phoneNumber: string;
  agentId: string | null;
  /** E.164 of the other side, or for a group the sorted participants joined by `,` */
  participant: string;
  /** for a group: every other participant (E.164); null for a one-to-one conversation */
  participants: readonly string[] | null;
  groupName: string | null;
};
type Content = {
  messageId: string;
  body: string;
  mediaUrls: readonly string[];
  channel: Channel;
  /** how a text is carried (null on channels that are not SMS) */
  encoding: 'GSM-7' | 'UCS-2' | null;
  segments: number | null;
};
/** the channel of the conversation, set when it starts (default `native`) */
type OnChannel = { conversationChannel?: ConversationChannel };
/** which rules decide an outbound message: the caps of texts, or a chat session's window and templates */
type OutboundRules = { rules: CapRules; session?: undefined } | { session: SessionSend; rules?: undefined };

export type ConversationCommand =
  | Command<
      'RecordOutbound',
      Ref &
        Party &
        Content &
        OnChannel &
        OutboundRules & {
          replyToMessageId: string | null;
          sendStyle: string | null;
          kind: OutboundKind;
        }
    >
  | Command<
      'RecordInbound',
      Ref &
        Party &
        Content &
        OnChannel & {
          from: string;
          carrierMessageId: string;
          receivedAt: string;
          keyword: { kind: ConsentKeyword; keyword: string } | null;
        }
    >
  | Command<'SetConversationState', Ref & { state?: Record<string, unknown> | null; groupName?: string | null }>;

export type ConversationEvent =
  | Event<
      'ConversationStarted',
      Ref &
        Party & {
          accountId: string;
          /** `native` for conversations recorded before channels existed (the upcaster fills it in) */
          channel: ConversationChannel;
          isGroup: boolean;
          groupId: string | null;
          startedBy: 'outbound' | 'inbound';
          startedAt: string;
        }
    >
  | Event<
      'OutboundMessageAccepted',
      Ref &
        Content & {
          numberId: string;
          agentId: string | null;
          from: string;
          /** the participant key (a group's is its member list) */
          to: string;
          /** who the carrier sends it to: one E.164, or every member of a group */
          recipients: readonly string[];
          replyToMessageId: string | null;
          sendStyle: string | null;
          kind: OutboundKind;
          /** the one message allowed after a quiet spell of INACTIVITY_DAYS; the conversation then waits for a reply */
          reengagement: boolean;
          /** a chat template send: the template and its values (absent on every other message) */
          template?: { name: string; language: string; values: readonly string[] | Readonly<Record<string, string>> | null };
          acceptedAt: string;
        }
    >
  | Event<
      'InboundMessageReceived',
      Ref &
        Content & {
          numberId: string;
          agentId: string | null;
          from: string;
          to: string;
          carrierMessageId: string;
          keyword: { kind: ConsentKeyword; keyword: string } | null;
          receivedAt: string;
        }
    >
  | Event<'ConversationStateSet', Ref & { state: Record<string, unknown> | null; setAt: string }>
  | Event<'GroupRenamed', Ref & { groupName: string | null; renamedAt: string }>;

export type ConversationState =
  | { exists: false }
  | {
      exists: true;
      conversationId: string;
      accountId: string;
      numberId: string;
      participant: string;
      channel: ConversationChannel;
      isGroup: boolean;
      groupName: string | null;
      createdAt: string;
      lastMessageAt: string;
      messageCount: number;
      inboundCount: number;
      /** when the participant last wrote (it opens a chat session's window), null while they never did */
      lastInboundAt: string | null;
      /** outbound messages since the participant last wrote (all of them while they never did) */
      outboundSinceReply: number;
      /** a re-engagement message went out and the participant has not answered since */
      reengagementLocked: boolean;
      conversationState: Record<string, unknown> | null;
      /** the ids of the latest RECENT_IDS messages: a repeated record of one of them is a no-op */
      recentMessageIds: readonly string[];
    };

/** How many recent message ids a conversation remembers to make repeated records no-ops (retries come soon after). */
export const RECENT_IDS = 200;
const remember = (ids: readonly string[], id: string): string[] => [...ids.slice(-(RECENT_IDS - 1)), id];

const notFound = () => new DomainError('CONVERSATION_NOT_FOUND', 'Conversation not found');

/** Why an outbound message may not be sent now, in the words the API answers with; null when it may. */
export function outboundRefusal(
  s: ConversationState,
  rules: { streakLimit: number; inboundOnly: boolean },
  now: string,
): DomainError | null {
  if (!s.exists || s.inboundCount === 0) {
    if (rules.inboundOnly)
      return new DomainError(
        'INBOUND_ONLY',
        'This number is inbound-only: it cannot send the first message to a new recipient. It can answer once they have written to it.',
      );
  }
  if (!s.exists) return null;
  if (s.reengagementLocked)
    return new DomainError(
      'CONVERSATION_INACTIVE',
      `The conversation was quiet for over ${INACTIVITY_DAYS} days and its one re-engagement message was already sent.`,
    );
  if (s.inboundCount === 0 && s.outboundSinceReply >= AWAITING_REPLY_LIMIT)
    return new DomainError(
      'CONVERSATION_AWAITING_REPLY',
      `${AWAITING_REPLY_LIMIT} messages were sent to this new recipient, who has not replied yet.`,
    );
  if (s.inboundCount > 0 && s.outboundSinceReply >= rules.streakLimit)
    return new DomainError(
      'CONVERSATION_STREAK_LIMIT',
      `${s.outboundSinceReply} messages in a row were sent to this recipient without a reply (limit ${rules.streakLimit}).`,
    );
  void now;
  return null;
}

/** Whether a message sent at `now` is the re-engagement message after a quiet spell. */
export const isReengagement = (s: ConversationState, now: string): boolean => s.exists && s.lastMessageAt < addDays(now, -INACTIVITY_DAYS);

export const conversationDecider: Decider<ConversationCommand, ConversationEvent, ConversationState> = {
  initialState: () => ({ exists: false }),

  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    switch (cmd.type) {
      case 'RecordOutbound': {
        const d = cmd.data;
        if (s.exists && s.recentMessageIds.includes(d.messageId)) return [];
        if (d.kind === 'message') {
          const refusal = d.session
            ? sessionSendRefusal(s.exists ? s.lastInboundAt : null, d.session, now)
            : outboundRefusal(s, d.rules, now);
          if (refusal) throw refusal;
        }
        const out: ConversationEvent[] = [];
        if (!s.exists) out.push(started(d, cmd.metadata.accountId, 'outbound', now));
        const t = d.session?.template;
        out.push({
          type: 'OutboundMessageAccepted',
          data: {
            conversationId: d.conversationId,
            messageId: d.messageId,
            numberId: d.numberId,
            agentId: d.agentId,
            from: d.phoneNumber,
            to: d.participant,
            recipients: d.participants ?? [d.participant],
            body: d.body,
            mediaUrls: d.mediaUrls,
            channel: d.channel,
            encoding: d.encoding,
            segments: d.segments,
            replyToMessageId: d.replyToMessageId,
            sendStyle: d.sendStyle,
            kind: d.kind,
            reengagement: d.kind === 'message' && !d.session && isReengagement(s, now),
            ...(t ? { template: { name: t.name, language: t.language, values: t.values } } : {}),
            acceptedAt: now,
          },
        });
        return out;
      }
      case 'RecordInbound': {
        const d = cmd.data;
        if (s.exists && s.recentMessageIds.includes(d.messageId)) return [];
        const out: ConversationEvent[] = [];
        if (!s.exists) out.push(started(d, cmd.metadata.accountId, 'inbound', now));
        out.push({
          type: 'InboundMessageReceived',
          data: {
            conversationId: d.conversationId,
            messageId: d.messageId,
            numberId: d.numberId,
            agentId: d.agentId,
            from: d.from,
            to: d.phoneNumber,
            body: d.body,
            mediaUrls: d.mediaUrls,
            channel: d.channel,
            encoding: d.encoding,
            segments: d.segments,
            carrierMessageId: d.carrierMessageId,
            keyword: d.keyword,
            receivedAt: d.receivedAt,
          },
        });
        return out;
      }
      case 'SetConversationState': {
        if (!s.exists) throw notFound();
        const d = cmd.data;
        const out: ConversationEvent[] = [];
        if (d.state !== undefined && JSON.stringify(d.state) !== JSON.stringify(s.conversationState))
          out.push({ type: 'ConversationStateSet', data: { conversationId: d.conversationId, state: d.state, setAt: now } });
        if (d.groupName !== undefined && s.isGroup && d.groupName !== s.groupName)
          out.push({ type: 'GroupRenamed', data: { conversationId: d.conversationId, groupName: d.groupName, renamedAt: now } });
        return out;
      }
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'ConversationStarted':
        return {
          exists: true,
          conversationId: e.data.conversationId,
          accountId: e.data.accountId,
          numberId: e.data.numberId,
          participant: e.data.participant,
          channel: e.data.channel,
          isGroup: e.data.isGroup,
          groupName: e.data.groupName,
          createdAt: e.data.startedAt,
          lastMessageAt: e.data.startedAt,
          messageCount: 0,
          inboundCount: 0,
          lastInboundAt: null,
          outboundSinceReply: 0,
          reengagementLocked: false,
          conversationState: null,
          recentMessageIds: [],
        };
      case 'OutboundMessageAccepted':
        if (!s.exists) return s;
        return {
          ...s,
          lastMessageAt: e.data.acceptedAt,
          messageCount: s.messageCount + 1,
          // an automatic answer (STOP/HELP/START confirmations) is not the sender writing: it counts towards no cap
          outboundSinceReply: e.data.kind === 'message' ? s.outboundSinceReply + 1 : s.outboundSinceReply,
          reengagementLocked: s.reengagementLocked || e.data.reengagement,
          recentMessageIds: remember(s.recentMessageIds, e.data.messageId),
        };
      case 'InboundMessageReceived':
        if (!s.exists) return s;
        return {
          ...s,
          lastMessageAt: e.data.receivedAt > s.lastMessageAt ? e.data.receivedAt : s.lastMessageAt,
          messageCount: s.messageCount + 1,
          inboundCount: s.inboundCount + 1,
          lastInboundAt: s.lastInboundAt === null || e.data.receivedAt > s.lastInboundAt ? e.data.receivedAt : s.lastInboundAt,
          outboundSinceReply: 0,
          reengagementLocked: false,
          recentMessageIds: remember(s.recentMessageIds, e.data.messageId),
        };
      case 'ConversationStateSet':
        return s.exists ? { ...s, conversationState: e.data.state } : s;
      case 'GroupRenamed':
        return s.exists ? { ...s, groupName: e.data.groupName } : s;
      default:
        return assertNever(e);
    }
  },
};

function started(d: Ref & Party & OnChannel, accountId: string, startedBy: 'outbound' | 'inbound', now: string): ConversationEvent {
  const isGroup = d.participants !== null;
  return {
    type: 'ConversationStarted',
    data: {
      conversationId: d.conversationId,
      accountId,
      channel: d.conversationChannel ?? 'native',
      numberId: d.numberId,
      phoneNumber: d.phoneNumber,
      agentId: d.agentId,
      participant: d.participant,
      participants: d.participants,
      isGroup,
      groupId: isGroup ? `grp_${d.conversationId.replace(/^conv_/, '')}` : null,
      groupName: d.groupName,
      startedBy,
      startedAt: now,
    },
  };
}

export const conversationEventTypes = [
  'ConversationStarted',
  'OutboundMessageAccepted',
  'InboundMessageReceived',
  'ConversationStateSet',
  'GroupRenamed',
] as const satisfies readonly ConversationEvent['type'][];

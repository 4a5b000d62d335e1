import type { Channel, ConversationChannel, ConversationEvent } from '../../../domain/conversation/conversation.decider.js';
import type { Failure, MessageEvent, ReceiptStatus } from '../../../domain/message/message.decider.js';
import type { RequestContext } from '../../shared/context.js';

/**
 * The channel-neutral delivery of messages (docs/messaging.md#delivery-one-pipeline): one process manager takes every
 * accepted outbound message through queue → preflight → submit → outcome, one handler takes what every provider
 * reports (inbound messages and reactions, receipts), keyed by the channel and the provider's message id. What differs
 * between channels is a `MessageTransport`, contributed by the channel's capability (`messageTransports` of its module);
 * a provider of a channel is an adapter behind the transport's own port (a carrier behind the SMS transport). See
 * docs/adding-a-channel.md.
 */

/** An accepted outbound message, as the pipeline hands it to its transport. */
export type OutboundMessage = Extract<ConversationEvent, { type: 'OutboundMessageAccepted' }>['data'];

/** A reaction recorded on a message of the transport's channel, for the transport to pass on. */
export type OutboundReaction = Extract<MessageEvent, { type: 'MessageReactionAdded' }>['data'];

/** Who a message goes to, or why it fails without being sent. */
export type Preflight = Readonly<{ failure: Failure }> | Readonly<{ failure: null; recipients: readonly string[] }>;

/**
 * The message fails without having been sent: the provider refused it, or the transport found before sending that it
 * cannot go (a chat number no longer bound). `failure` is the reason the specification gives (docs/message-failures.md).
 */
export class DeliveryRefused extends Error {
  constructor(readonly failure: Failure) {
    super(failure.failureReason);
    this.name = 'DeliveryRefused';
  }
}

/** A provider's failure in its own terms: the transport maps it to the specification's reason (`failureOf`). */
export type ProviderFailure = Readonly<{ code: string | null; detail: string | null }>;

/** The line an inbound message reached: the account's number (or a channel's own line) it belongs to. */
export type InboundLine = Readonly<{ accountId: string; numberId: string; phoneNumber: string; agentId: string | null }>;

export interface MessageTransport {
  /** the channel's name: the key, with the provider's message id, of what the provider reports (`sms`, `chatapp`, `imessage`) */
  readonly channel: string;
  /** the `channel` of the messages it delivers (texts: `sms` and `mms`) */
  readonly carries: readonly string[];
  /** who acts in the events recorded from its reports (`system:carrier`, …) */
  readonly actor: string;

  // ---- outbound -----------------------------------------------------------------------------------------

  /** Checks that fail a message without sending it, and who it goes to (absent: it goes to its recipients). */
  preflight?(m: OutboundMessage, ctx: RequestContext): Promise<Preflight>;
  /**
   * Hands the message to the provider, keyed by its id so that a repeated submission sends nothing twice, and answers
   * the provider's ids of what it sent. Throws DeliveryRefused when it cannot go; any other error is an unknown
   * outcome, submitted again.
   */
  submit(m: OutboundMessage, recipients: readonly string[], ctx: RequestContext): Promise<readonly string[]>;
  /** what a message fails with when its submission's outcome stayed unknown MAX_SUBMISSION_ERRORS times */
  readonly unanswered: Failure;
  /** Passes a reaction recorded here on one of its messages to the provider (absent: reactions stay here). */
  react?(r: OutboundReaction, ctx: RequestContext): Promise<void>;
  /** A failed receipt's reason, category and retryability, from the provider's words. */
  failure(f: ProviderFailure): Failure;

  // ---- inbound ------------------------------------------------------------------------------------------

  /** The line an inbound message to `address` belongs to (an E.164, or the provider's id of its line); null: dropped. */
  line(address: string): Promise<InboundLine | null>;
  /** ids derived from the provider's and the line's, so that a report made twice is recorded once */
  conversationId(line: InboundLine, participant: string): string;
  inboundMessageId(providerMessageId: string): string;
  inboundReactionId(providerMessageId: string): string;
  /** the channel of an inbound message, and of the conversations it starts */
  inboundChannel(mediaUrls: readonly string[]): Channel;
  readonly conversationChannel: ConversationChannel;
  /** texts only: how a body is carried (encoding, segments), and the consent keywords they read (docs/messaging.md#opt-out) */
  readonly texts?: Readonly<{ measure: (body: string) => { encoding: 'GSM-7' | 'UCS-2'; segments: number }; readsKeywords: true }>;
}

/** A message (or a reaction to one) someone sent to one of the platform's lines, as a provider reports it. */
export type InboundMessage = Readonly<{
  /** the transport's channel */
  channel: string;
  /** the line it was sent to: the E.164 of a number, or the provider's id of the line */
  to: string;
  /** the provider's id of the message: a report made twice is recorded once */
  providerMessageId: string;
  from: string;
  body: string;
  mediaUrls: readonly string[];
  receivedAt: string;
  /** a group message: every participant (the sender and the platform's number included), and its name */
  group: Readonly<{ participants: readonly string[]; name: string | null }> | null;
  /** a reaction to an earlier message, named by the platform's id or the provider's; an empty reaction takes one back */
  reaction: Readonly<{ reaction: string; target: string }> | null;
}>;

/** What a provider later says about a message it was given. Receipts may come late, twice, or out of order. */
export type DeliveryReceipt = Readonly<{
  channel: string;
  providerMessageId: string;
  /** unique per receipt (a repeated delivery of one receipt repeats it) */
  receiptId: string;
  status: ReceiptStatus;
  /** when the provider says it happened (ISO 8601) */
  at: string;
  failure: ProviderFailure | null;
}>;

/** Where every provider adapter hands what it receives (a live provider's callback route, the sandbox kit). */
export interface MessagingInboundPort {
  /** Records the message or reaction; null when it is dropped (no line of this channel here, or nothing to record). */
  message(m: InboundMessage, o?: { readYourWrites?: boolean }): Promise<{ messageId: string } | null>;
  /** Records the receipt; throws while no message has that provider id here yet (the provider reports it again). */
  receipt(r: DeliveryReceipt): Promise<void>;
}

/**
 * The carrier's messaging side (docs/messaging.md#receiving): submitting texts, and the receipts and inbound
 * texts it reports back. Shaped by the send pipeline; the sandbox carrier implements it for sandbox mode.
 */
export type OutboundSms = Readonly<{
  /** the message id: submitting the same key again returns the first result and sends nothing again */
  idempotencyKey: string;
  accountId: string;
  /** E.164 of the platform's number */
  from: string;
  /** E.164 of the recipient; a group send has one submission per recipient, each with its own key */
  to: string;
  body: string;
  mediaUrls: readonly string[];
}>;

export type SubmittedSms = Readonly<{ carrierMessageId: string }>;

/**
 * A refusal at submission time. `failureReason` is one of the reasons listed in docs/message-failures.md
 * (exact text); the message fails with it.
 */
export class SmsSubmissionError extends Error {
  constructor(
    readonly failureReason: string,
    readonly errorCode: string | null = null,
  ) {
    super(failureReason);
    this.name = 'SmsSubmissionError';
  }
}

export interface SmsCarrierPort {
  /**
   * Hands one message to the carrier. Idempotent by `idempotencyKey`. Throws SmsSubmissionError when the carrier
   * refuses it; any other error means the outcome is unknown (the caller submits again with the same key).
   */
  submit(m: OutboundSms): Promise<SubmittedSms>;
}

/** What the carrier later says about a submitted message. Receipts may come late, twice, or out of order. */
export type SmsReceipt = Readonly<{
  carrierMessageId: string;
  /** unique per receipt the carrier sends (a repeated delivery of one receipt repeats its id) */
  receiptId: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  failureReason: string | null;
  errorCode: string | null;
  /** when the carrier says it happened (ISO 8601) */
  at: string;
}>;

/** A text (or media message, group message, reaction) the carrier received for one of the platform's numbers. */
export type InboundSms = Readonly<{
  /** the carrier's id of the inbound message: a repeated callback with the same id is stored once */
  carrierMessageId: string;
  from: string;
  /** the platform's number it was sent to */
  to: string;
  body: string;
  mediaUrls: readonly string[];
  receivedAt: string;
  /** a group message: every participant's E.164 (the sender and the platform's number included), optional name */
  group: Readonly<{ participants: readonly string[]; name: string | null }> | null;
  /** a reaction to an earlier message, by the platform's message id or the carrier's id of that message */
  reaction: Readonly<{ reactionType: string; targetMessageId: string }> | null;
}>;

/**
 * Where a carrier adapter hands what it receives (implemented by the messaging application; a real carrier's
 * HTTP callback route and the sandbox carrier both call it).
 */
export interface SmsCarrierEventsPort {
  receipt(r: SmsReceipt): Promise<void>;
  /** stores the inbound message; null when it was dropped (the number is not the platform's, or released) */
  inbound(m: InboundSms): Promise<{ messageId: string } | null>;
}

/**
 * The carrier's messaging side (docs/messaging.md#delivery-one-pipeline): what the texts' transport (SmsTransport) hands
 * a carrier. The sandbox kit's carrier implements it in sandbox mode; a live carrier is one adapter folder
 * (docs/adding-a-channel.md). What a carrier receives (inbound texts, media, group messages, reactions) and reports
 * (receipts) goes to the `MessagingInboundPort` with channel `sms`; the failure of a failed receipt is `{code: the
 * carrier's code, detail: the reason of docs/message-failures.md it maps that code to}`.
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

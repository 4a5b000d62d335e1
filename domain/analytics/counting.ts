/**
 * The one counting rule of usage and analytics (docs/analytics.md#the-counting-rule). Every usage endpoint
 * (`GET /v1/usage`, `/v1/usage/daily`, `/monthly`, `/by-number`, `/by-agent`), the delivery statistics of the
 * webhook log and the console's charts count by these functions, so their figures agree.
 */

/**
 * Message channels that draw on the account's credit: texts the platform's carrier sends and receives, and the
 * rich-messaging channel's messages, which are treated as texts are (docs/rich-messaging.md#billing). A
 * message on any other channel (the chat-application channel, billed by the chat platform to the customer's
 * own business account) is never usage and never money here.
 */
export const CREDIT_CHANNELS: readonly string[] = ['sms', 'mms', 'imessage'];

/** A message counts in usage when its channel draws on credit. */
export const countsAsUsage = (channel: string): boolean => CREDIT_CHANNELS.includes(channel);

/** A call counts in usage (`calls`, `totalSeconds`) once it connected: it ended `completed`. */
export const COUNTED_CALL_STATUS = 'completed';

/**
 * A webhook delivery counts once, on the day it was scheduled, with its latest outcome; a test send
 * (`POST /v1/webhooks/test`) is never counted, and sending a delivery again adds an attempt, not a delivery.
 */
export const countsAsDelivery = (d: { test: boolean }): boolean => !d.test;

/** Percent with one decimal; null when there is nothing to divide by. */
export const percent = (part: number, whole: number): number | null => (whole === 0 ? null : Math.round((part / whole) * 1000) / 10);

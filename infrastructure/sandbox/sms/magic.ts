import { FAILURE_REASONS, type FailureCode, failureReasonOf } from '../../../domain/message/failure-reasons.js';
import type { ReceiptStatus } from '../../../domain/message/message.decider.js';
import { sandboxLineInfo } from '../carrier/sandbox-carrier.js';

/**
 * What the sandbox carrier does with a text, decided by the recipient's number (docs/sandbox.md, "Messaging:
 * magic numbers"). Magic numbers sit in the 555-0120…0199 part of the fictional 555-01XX range (the carrier's
 * inventory is 555-0100…0119, so a number the platform owns is never magic), and they follow the lookup rules:
 * a number whose last digit makes it a landline (5, 6) fails as a landline, wherever it is.
 *
 * - behaviours: `+1 415 555 012X`
 * - one failure reason each: `+1 212 555 01XX`, from 0120 up in catalogue order, skipping the landline digits
 * - reasons that follow from the number itself: landlines, `+1 900` (premium), invalid numbers, other countries
 */

export type Behaviour = 'read' | 'late' | 'out-of-order' | 'duplicate' | 'no-delivery-receipt' | 'refused' | 'lost' | 'lost-after-send';

export const BEHAVIOUR_NUMBERS: Readonly<Record<string, { behaviour: Behaviour; description: string }>> = {
  '+14155550120': { behaviour: 'read', description: 'sent, delivered, then read' },
  '+14155550121': { behaviour: 'late', description: 'sent on time, delivered after SANDBOX_SMS_LATE_DELIVERY_DELAY_MS' },
  '+14155550122': { behaviour: 'out-of-order', description: 'the delivered receipt arrives before the sent receipt' },
  '+14155550123': { behaviour: 'duplicate', description: 'every receipt arrives twice (the same receiptId)' },
  '+14155550124': { behaviour: 'no-delivery-receipt', description: 'sent, and never a delivery receipt' },
  '+14155550127': {
    behaviour: 'refused',
    description: 'refused at submission (SmsSubmissionError "The carrier rejected the message.", CARRIER_REJECTED)',
  },
  '+14155550128': {
    behaviour: 'lost',
    description: 'the first submission of each key fails with an unknown outcome, and nothing was sent; the next one is accepted',
  },
  '+14155550129': {
    behaviour: 'lost-after-send',
    description: 'the first submission of each key is accepted, then fails with an unknown outcome; the next one answers the same id',
  },
};

/** Reasons that follow from what lookup says about the number, so they get no number of the failure block. */
const FROM_LOOKUP: ReadonlySet<FailureCode> = new Set([
  'RECIPIENT_LANDLINE',
  'RECIPIENT_PREMIUM_RATE',
  'RECIPIENT_INVALID_OR_DISABLED',
  'DESTINATION_COUNTRY_DISABLED',
]);

/** The failure block's slots: 555-0120…0199 of area code 212 without the landline last digits 5 and 6. */
const FAILURE_SLOTS = Array.from({ length: 80 }, (_, i) => 120 + i)
  .filter((n) => n % 10 !== 5 && n % 10 !== 6)
  .map((n) => `+1212555${String(n).padStart(4, '0')}`);

export const FAILURE_NUMBERS: Readonly<Record<string, FailureCode>> = Object.fromEntries(
  FAILURE_REASONS.filter((f) => !FROM_LOOKUP.has(f.errorCode)).map((f, i) => [FAILURE_SLOTS[i], f.errorCode]),
);

/** A number for every failure reason (the first of several for the reasons that follow from lookup). */
export const NUMBER_FOR_FAILURE: Readonly<Record<FailureCode, string>> = {
  ...(Object.fromEntries(Object.entries(FAILURE_NUMBERS).map(([n, c]) => [c, n])) as Record<FailureCode, string>),
  RECIPIENT_LANDLINE: '+12125550125',
  RECIPIENT_PREMIUM_RATE: '+19005550100',
  RECIPIENT_INVALID_OR_DISABLED: '+19995550100',
  DESTINATION_COUNTRY_DISABLED: '+447700900123',
};

export type Timing = Readonly<{ sentDelayMs: number; deliveryDelayMs: number; lateDeliveryDelayMs: number }>;

/** One receipt the carrier will report: when it happened and when it arrives, counted from the submission. */
export type PlannedReceipt = Readonly<{
  status: ReceiptStatus;
  failureCode: FailureCode | null;
  happensAfterMs: number;
  arrivesAfterMs: number;
  copies: 1 | 2;
}>;

export type Plan =
  | Readonly<{ kind: 'refuse'; failureCode: FailureCode }>
  | Readonly<{ kind: 'accept'; receipts: readonly PlannedReceipt[]; lost: 'before' | 'after' | null }>;

const receipt = (status: ReceiptStatus, afterMs: number, failureCode: FailureCode | null = null): PlannedReceipt => ({
  status,
  failureCode,
  happensAfterMs: afterMs,
  arrivesAfterMs: afterMs,
  copies: 1,
});

/**
 * How a failure is reported: the carrier refuses configuration problems and limits before sending (one
 * `failed` receipt); anything else is `sent` first and fails downstream.
 */
export function failureReceipts(code: FailureCode, t: Timing): PlannedReceipt[] {
  const { category } = failureReasonOf(code);
  if (category === 'configuration' || category === 'wait') return [receipt('failed', t.sentDelayMs, code)];
  return [receipt('sent', t.sentDelayMs), receipt('failed', t.sentDelayMs + t.deliveryDelayMs, code)];
}

/** What lookup alone says about sending to a number: a reason it cannot take texts, or null. */
export function lookupFailure(to: string): FailureCode | null {
  const info = sandboxLineInfo(to);
  if (!info.valid) return 'RECIPIENT_INVALID_OR_DISABLED';
  if (info.country !== 'US' && info.country !== 'CA') return 'DESTINATION_COUNTRY_DISABLED';
  if (info.lineType === 'premium') return 'RECIPIENT_PREMIUM_RATE';
  if (info.lineType === 'landline') return 'RECIPIENT_LANDLINE';
  return null;
}

/** The carrier's plan for a text to `to` (deterministic: the same number always behaves the same way). */
export function planFor(to: string, t: Timing): Plan {
  const fromLookup = lookupFailure(to);
  if (fromLookup) return { kind: 'accept', receipts: failureReceipts(fromLookup, t), lost: null };
  const failure = FAILURE_NUMBERS[to];
  if (failure) return { kind: 'accept', receipts: failureReceipts(failure, t), lost: null };
  const sent = receipt('sent', t.sentDelayMs);
  const deliveredAt = t.sentDelayMs + t.deliveryDelayMs;
  const delivered = receipt('delivered', deliveredAt);
  const normal = { kind: 'accept', receipts: [sent, delivered], lost: null } as const;
  const behaviour = BEHAVIOUR_NUMBERS[to]?.behaviour;
  switch (behaviour) {
    case undefined:
      return normal;
    case 'read':
      return { ...normal, receipts: [sent, delivered, receipt('read', deliveredAt + t.deliveryDelayMs)] };
    case 'late':
      return { ...normal, receipts: [sent, receipt('delivered', t.sentDelayMs + t.lateDeliveryDelayMs)] };
    case 'out-of-order':
      // it happened in order; the sent receipt arrives a while after the delivered one
      return { ...normal, receipts: [delivered, { ...sent, arrivesAfterMs: deliveredAt + t.sentDelayMs }] };
    case 'duplicate':
      return { ...normal, receipts: [sent, delivered].map((r) => ({ ...r, copies: 2 as const })) };
    case 'no-delivery-receipt':
      return { ...normal, receipts: [sent] };
    case 'refused':
      return { kind: 'refuse', failureCode: 'CARRIER_REJECTED' };
    case 'lost':
      return { ...normal, lost: 'before' };
    case 'lost-after-send':
      return { ...normal, lost: 'after' };
  }
}

export type MagicNumber = Readonly<{
  phoneNumber: string;
  outcome: string;
  category: string | null;
  errorCode: FailureCode | null;
  /** the reason's text as listed (a carrier and the registration page as `{carrier}` and `{register_url}`) */
  failureReason: string | null;
}>;

/** The table of docs/sandbox.md: behaviours first, then one number per failure reason in catalogue order. */
export function magicNumbers(): MagicNumber[] {
  const behaviours = Object.entries(BEHAVIOUR_NUMBERS).map(([phoneNumber, b]) => ({
    phoneNumber,
    outcome: `${b.behaviour}: ${b.description}`,
    category: null,
    errorCode: null,
    failureReason: null,
  }));
  const failures = FAILURE_REASONS.map((f) => ({
    phoneNumber: NUMBER_FOR_FAILURE[f.errorCode],
    outcome: f.category === 'configuration' || f.category === 'wait' ? 'failed' : 'sent, then failed',
    category: f.category,
    errorCode: f.errorCode,
    failureReason: f.text,
  }));
  return [...behaviours, ...failures];
}

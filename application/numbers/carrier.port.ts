import type { NanpCountry } from '../../domain/phone-number/north-american-area-codes.js';

/**
 * The carrier (the "SMS provider" of docs/numbers.md): number inventory, purchase, routing, release and line-type
 * lookup. Shaped by the provisioning use case. Failures are DomainErrors: `VALIDATION_ERROR` (an area code
 * the carrier does not serve), `NUMBER_UNAVAILABLE` (someone else bought it first), `SMS_PROVIDER_ERROR` /
 * `TELEPHONY_PROVIDER_ERROR` (upstream failure; as docs/errors.md says, the operation may already have executed).
 */
export type AvailableNumber = Readonly<{ phoneNumber: string; areaCode: string; country: NanpCountry }>;
export type PurchasedNumber = Readonly<{ phoneNumber: string; carrierRef: string }>;

export const LINE_TYPES = ['mobile', 'landline', 'voip', 'toll-free', 'premium', 'unknown'] as const;
export type LineType = (typeof LINE_TYPES)[number];
export type LineInfo = Readonly<{
  phoneNumber: string;
  /** false when the number cannot exist (unassigned area code, unknown country code) */
  valid: boolean;
  lineType: LineType;
  /** ISO 3166-1 alpha-2, null when unknown */
  country: string | null;
  carrierName: string | null;
  rcsSupported: boolean;
}>;

export interface CarrierPort {
  /** Numbers for sale now, in the carrier's order (an area code, or any of the country's when null). */
  searchAvailable(q: { country: NanpCountry; areaCode: string | null; limit: number }): Promise<AvailableNumber[]>;
  /**
   * Buys `phoneNumber`. Idempotent by `idempotencyKey`: while the key holds a number, buying again with it
   * returns that number (whatever number is asked for), so a retried or resumed purchase never buys twice.
   */
  purchase(o: { phoneNumber: string; idempotencyKey: string; accountId: string }): Promise<PurchasedNumber>;
  /** The number the key holds, if any (to resume a purchase whose answer was lost). */
  findPurchase(idempotencyKey: string): Promise<PurchasedNumber | null>;
  /** Points the number's inbound messages and calls at this platform. Idempotent. */
  configureRouting(o: { idempotencyKey: string; phoneNumber: string }): Promise<void>;
  /** Gives the key's number back to the carrier; a no-op when the key holds nothing. */
  release(o: { idempotencyKey: string }): Promise<void>;
  lookup(phoneNumber: string): Promise<LineInfo>;
}

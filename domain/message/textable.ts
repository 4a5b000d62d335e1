import { AREA_CODES, PREMIUM_CODES, TOLL_FREE_CODES } from '../phone-number/north-american-area-codes.js';

/**
 * Texts go to and from US and Canadian numbers only (docs/messaging.md#sending): +1, then an area code of either
 * country (toll-free and premium included). Why `e164` cannot be texted, in the words the API answers with, or null.
 */
export function untextableNumber(e164: string): string | null {
  if (!/^\+1[2-9]\d{2}[2-9]\d{6}$/.test(e164)) return 'must be a US or Canadian phone number in E.164, such as +14155550123';
  const ac = e164.slice(2, 5);
  return AREA_CODES.has(ac) || TOLL_FREE_CODES.has(ac) || PREMIUM_CODES.has(ac) ? null : 'only US and Canadian numbers can be texted';
}

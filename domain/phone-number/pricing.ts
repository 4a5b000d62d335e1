/** Prices of the phone-number capability, in integer micro-dollars (docs/limits.md#money). */
export const NUMBER_MONTHLY_PRICE_MICROS = 3_000_000;
/** Provisioning needs at least this much balance (docs/numbers.md#provisioning), and charges it as the first month. */
export const NUMBER_PROVISIONING_BALANCE_MICROS = NUMBER_MONTHLY_PRICE_MICROS;
export const LOOKUP_PRICE_MICROS = 9_000;
export const LOOKUP_BATCH_MAX = 25;

/**
 * `iso` plus `months` calendar months in UTC, clamped to the last day of the target month (Jan 31 + 1 month
 * = Feb 28/29). Periods are always counted from the same anchor, so they never drift: period n starts at
 * addMonths(anchor, n).
 */
export function addMonths(iso: string, months: number): string {
  const d = new Date(iso);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + months;
  const targetYear = y + Math.floor(m / 12);
  const targetMonth = ((m % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(targetYear, targetMonth + 1, 0)).getUTCDate();
  const day = Math.min(d.getUTCDate(), lastDay);
  return new Date(
    Date.UTC(targetYear, targetMonth, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()),
  ).toISOString();
}

/** Charge ids make charges idempotent: one per number and billing period (period 0 is the first month). */
export const monthlyChargeId = (numberId: string, period: number) => `number_monthly:${numberId}:${period}`;

/** The number and period a monthly charge id names (null for any other id): `monthlyChargeId` read back. */
export function monthlyChargeOf(chargeId: string): { numberId: string; period: number } | null {
  const m = /^number_monthly:(.+):(0|[1-9][0-9]{0,8})$/.exec(chargeId);
  return m ? { numberId: m[1]!, period: Number(m[2]) } : null;
}

/**
 * The largest balance an account may hold: 10^15 micro-dollars ($1,000,000,000). Far below 2^53 (about
 * 9.007 * 10^15), so every balance, credit, charge and sum of them is an exact integer in a JavaScript number,
 * in JSON and in PostgreSQL `bigint` (docs/input-rules.md).
 */
export const MAX_BALANCE_MICROS = 1_000_000_000_000_000;
/** The largest single credit or charge: 10^12 micro-dollars ($1,000,000). */
export const MAX_AMOUNT_MICROS = 1_000_000_000_000;

/** `$3.00`, `$0.009`: at least two decimals, more only when the micro-dollars need them. */
export function formatDollars(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / 1_000_000);
  let frac = String(abs % 1_000_000)
    .padStart(6, '0')
    .replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  return `${sign}$${whole}.${frac}`;
}

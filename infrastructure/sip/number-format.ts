/**
 * How a carrier writes phone numbers in SIP (docs/sip.md#number-formats): with or without the `+` of E.164, behind
 * a prefix some trunks want (a tech prefix such as `9#`), and, for numbers that arrive without a country code, the
 * country code to add.
 */
export type NumberFormat = Readonly<{
  /** whether the carrier writes the `+` */
  plus: boolean;
  /** put before every number the platform sends, taken off numbers that arrive with it */
  prefix: string;
  /** the country code of national numbers that arrive without one (10 digits for `1`) */
  defaultCountryCode: string;
}>;

export const DEFAULT_NUMBER_FORMAT: NumberFormat = { plus: true, prefix: '', defaultCountryCode: '1' };

/** An E.164 number as the carrier wants it in a URI's user part or a From. */
export function toCarrier(e164: string, f: NumberFormat): string {
  const digits = e164.replace(/^\+/, '');
  return `${f.prefix}${f.plus ? '+' : ''}${digits}`;
}

const NATIONAL_LENGTH: Record<string, number> = { '1': 10 };

/**
 * The E.164 number of a user part that arrived from the carrier, or null when it is none (a name, an extension,
 * too few or too many digits). Visual separators (`-`, `.`, spaces, brackets) and URI parameters are ignored.
 */
export function fromCarrier(user: string, f: NumberFormat): string | null {
  let s = decodeURIComponent(user.split(';')[0] ?? '').replace(/[\s().-]/g, '');
  if (f.prefix && s.startsWith(f.prefix)) s = s.slice(f.prefix.length);
  const plus = s.startsWith('+');
  if (plus) s = s.slice(1);
  if (!/^\d+$/.test(s)) return null;
  if (!plus) {
    if (s.startsWith('00')) s = s.slice(2);
    else if (s.length === NATIONAL_LENGTH[f.defaultCountryCode]) s = `${f.defaultCountryCode}${s}`;
  }
  if (s.length < 8 || s.length > 15 || s.startsWith('0')) return null;
  return `+${s}`;
}

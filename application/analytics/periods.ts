/**
 * Calendar arithmetic of the usage endpoints (docs/analytics.md): UTC days and months, and the current week (from
 * Monday), month or year in an IANA time zone. Pure: the time comes in as an argument.
 */
const DAY_MS = 86_400_000;

export const utcDay = (d: Date): string => d.toISOString().slice(0, 10);
export const addDays = (day: string, n: number): string => utcDay(new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS));

/** `YYYY-MM` of a UTC month `n` months after the month of `day`. */
export const addMonths = (month: string, n: number): string => {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const t = new Date(Date.UTC(y, m - 1 + n, 1));
  return t.toISOString().slice(0, 7);
};

/** Whether the runtime knows `tz` as an IANA time zone. */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock date and time in `tz` at instant `t`. */
function wall(t: number, tz: string): { y: number; m: number; d: number; h: number; min: number; s: number } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(t));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { y: get('year'), m: get('month'), d: get('day'), h: get('hour'), min: get('minute'), s: get('second') };
}

/** How far `tz` is ahead of UTC at instant `t`, in milliseconds. */
function offsetAt(t: number, tz: string): number {
  const w = wall(t, tz);
  return Date.UTC(w.y, w.m - 1, w.d, w.h, w.min, w.s) - Math.floor(t / 1000) * 1000;
}

/** The instant the wall clock of `tz` shows midnight of y-m-d (the first instant of that day there). */
export function zonedMidnight(y: number, m: number, d: number, tz: string): Date {
  const guess = Date.UTC(y, m - 1, d);
  const o1 = offsetAt(guess, tz);
  const o2 = offsetAt(guess - o1, tz);
  // across a change of offset between the guess and the answer, the offset in force at the answer wins
  return new Date(guess - o2);
}

export type Period = 'week' | 'month' | 'year';

/** The current calendar week (from Monday), month or year in `tz` at `now`: [start, end). */
export function periodBounds(period: Period, now: Date, tz: string): { start: Date; end: Date } {
  const w = wall(now.getTime(), tz);
  if (period === 'year') return { start: zonedMidnight(w.y, 1, 1, tz), end: zonedMidnight(w.y + 1, 1, 1, tz) };
  if (period === 'month') {
    const next = w.m === 12 ? { y: w.y + 1, m: 1 } : { y: w.y, m: w.m + 1 };
    return { start: zonedMidnight(w.y, w.m, 1, tz), end: zonedMidnight(next.y, next.m, 1, tz) };
  }
  const weekday = (new Date(Date.UTC(w.y, w.m - 1, w.d)).getUTCDay() + 6) % 7; // Monday 0
  const monday = new Date(Date.UTC(w.y, w.m - 1, w.d - weekday));
  const nextMonday = new Date(Date.UTC(w.y, w.m - 1, w.d - weekday + 7));
  return {
    start: zonedMidnight(monday.getUTCFullYear(), monday.getUTCMonth() + 1, monday.getUTCDate(), tz),
    end: zonedMidnight(nextMonday.getUTCFullYear(), nextMonday.getUTCMonth() + 1, nextMonday.getUTCDate(), tz),
  };
}

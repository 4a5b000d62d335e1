/**
 * The delivery retry schedule (docs/webhooks.md#retry-schedule): six attempts, the first immediately, then after
 * 5 min, 30 min, 2 h, 6 h and 12 h (about 20.6 hours in all). Each delay counts from the end of the failed
 * attempt before it. Data, plus one pure function.
 */
export const RETRY_DELAYS_S = [300, 1800, 7200, 21600, 43200] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1;

/**
 * Seconds to wait after the `failedSoFar`-th failed attempt (1-based), or null when the attempts are
 * exhausted. A `Retry-After` (from a 429 or 503) can push the delay up to twice the scheduled one, never
 * below it; the schedule stays the upper shape of the timeline.
 */
export function nextDelayS(
  failedSoFar: number,
  o: { status?: number | null; retryAfterS?: number | null; maxAttempts?: number } = {},
): number | null {
  const max = Math.min(o.maxAttempts ?? MAX_ATTEMPTS, MAX_ATTEMPTS);
  if (!Number.isInteger(failedSoFar) || failedSoFar < 1 || failedSoFar >= max) return null;
  const base = RETRY_DELAYS_S[failedSoFar - 1];
  if (base === undefined) return null;
  let d: number = o.status === 429 ? Math.max(base, 60) : base;
  if (o.retryAfterS !== undefined && o.retryAfterS !== null && Number.isFinite(o.retryAfterS) && o.retryAfterS > 0) {
    d = Math.min(Math.max(o.retryAfterS, d), 2 * d);
  }
  return d;
}

/** ISO time `seconds` after `iso`. */
export const addSeconds = (iso: string, seconds: number): string => new Date(Date.parse(iso) + seconds * 1000).toISOString();

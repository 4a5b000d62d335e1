import { DomainError } from '../../domain/shared/errors.js';
import type { ClockPort } from '../ports/clock.port.js';

/**
 * A number's send rate (docs/messaging.md#caps): a token bucket per number, `perSecond` tokens a second up to
 * `burst`. Faster sends answer RATE_LIMITED (429, retryable, no Retry-After). The bucket lives in the process
 * that takes the request: with several API processes each enforces the rate on its own share.
 */
export class SendRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly clock: ClockPort,
    private readonly o: { perSecond: number; burst: number },
  ) {}

  take(numberId: string): void {
    const now = this.clock.now().getTime();
    const b = this.buckets.get(numberId) ?? { tokens: this.o.burst, at: now };
    const tokens = Math.min(this.o.burst, b.tokens + (Math.max(0, now - b.at) / 1000) * this.o.perSecond);
    if (tokens < 1) {
      this.buckets.set(numberId, { tokens, at: now });
      throw new DomainError('RATE_LIMITED', `This number sends at most ${this.o.perSecond} messages a second (bursts of ${this.o.burst}).`);
    }
    this.buckets.set(numberId, { tokens: tokens - 1, at: now });
    if (this.buckets.size > 10_000) this.prune(now);
  }

  /** forgets full buckets, so the map stays as small as the set of busy numbers */
  private prune(now: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + ((now - b.at) / 1000) * this.o.perSecond >= this.o.burst) this.buckets.delete(k);
  }
}

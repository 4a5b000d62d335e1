import { performance } from 'node:perf_hooks';

/** The packet time of every stream: 20 ms of audio a packet (docs/sip.md#media). */
export const PTIME_MS = 20;

/** Something sent on the packet clock: it is told how many packet times have passed since it last sent. */
export interface Ticking {
  tick(due: number): void;
}

/** a stream more than this many packets behind (the process was stalled) skips the rest rather than burst them */
const MAX_CATCH_UP = 5;

/**
 * One clock for every RTP stream of the process (docs/sip.md#media): a timer set for each 20 ms boundary of
 * `performance.now()` (so it never drifts), at which every stream sends the packets due. A stall of the event loop
 * is caught up with a short burst, at most MAX_CATCH_UP packets.
 */
export class RtpClock {
  private readonly streams = new Map<Ticking, number>();
  private timer: NodeJS.Timeout | null = null;
  private readonly origin = performance.now();

  add(s: Ticking): void {
    this.streams.set(s, this.slot());
    if (!this.timer) this.schedule();
  }

  remove(s: Ticking): void {
    this.streams.delete(s);
    if (this.streams.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  get size(): number {
    return this.streams.size;
  }

  private slot(): number {
    return Math.floor((performance.now() - this.origin) / PTIME_MS);
  }

  private schedule(): void {
    const next = (this.slot() + 1) * PTIME_MS + this.origin;
    this.timer = setTimeout(() => this.fire(), Math.max(0, next - performance.now()));
  }

  private fire(): void {
    const now = this.slot();
    for (const [s, last] of this.streams) {
      const due = Math.min(MAX_CATCH_UP, now - last);
      this.streams.set(s, now);
      if (due <= 0) continue;
      try {
        s.tick(due);
      } catch {
        // one stream's failure is its own (it logs); the others go on
      }
    }
    if (this.streams.size > 0) this.schedule();
    else this.timer = null;
  }
}

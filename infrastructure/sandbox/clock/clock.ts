import { type Kysely, sql } from 'kysely';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { LoggerPort } from '../../../application/ports/logger.port.js';
import type { ReadDb } from '../../../projections/shared/read-db.js';

/** The one row of the offset (migration 030). */
export interface SandboxClockTable {
  id: number;
  offset_seconds: string | number | bigint;
  updated_at: Date | string;
}
type ClockDb = { sandbox_clock: SandboxClockTable };

/** One advance may move the clock by at most this much (a leap year). */
export const MAX_ADVANCE_SECONDS = 366 * 86_400;

export type SandboxClockState = Readonly<{ now: string; offsetSeconds: number }>;

/**
 * The sandbox clock (docs/sandbox.md#sandbox-clock): the base clock (the system's, or a test's) plus an offset
 * in seconds that only grows. The offset lives in the `sandbox_clock` table: `start` reads it before the process
 * serves or works, and a background refresh re-reads it every `refreshMs`, so the other processes of the
 * deployment follow an advance within that lag. `now()` stays synchronous: it reads the offset in memory.
 * The offset never goes down: events are ordered by the time they record, and a clock moved back would record
 * a later event as earlier than the one before it.
 */
export class SandboxClock implements ClockPort {
  private readonly db: Kysely<ReadDb & ClockDb>;
  private offsetSeconds = 0;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;

  constructor(
    private readonly base: ClockPort,
    db: Kysely<ReadDb>,
    private readonly log: LoggerPort,
    private readonly o: { refreshMs: number },
  ) {
    // its own table, not a read model: the same connection, with that table added to its type
    this.db = db.withTables<ClockDb>();
  }

  now(): Date {
    return new Date(this.base.now().getTime() + this.offsetSeconds * 1000);
  }

  state(): SandboxClockState {
    return { now: this.now().toISOString(), offsetSeconds: this.offsetSeconds };
  }

  /** Reads the stored offset, then keeps re-reading it in the background until `stop`. */
  async start(): Promise<void> {
    await this.refresh();
    if (this.timer || this.o.refreshMs <= 0) return;
    this.timer = setInterval(() => {
      if (this.refreshing) return;
      this.refreshing = this.refresh()
        .then(() => undefined)
        .catch((err: unknown) => this.log.warn({ err }, 'sandbox clock refresh failed; keeping the last offset'))
        .finally(() => {
          this.refreshing = null;
        });
    }, this.o.refreshMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.refreshing;
  }

  /** Re-reads the stored offset; the one in memory only ever grows. */
  async refresh(): Promise<SandboxClockState> {
    const row = await this.db.selectFrom('sandbox_clock').select('offset_seconds').where('id', '=', 1).executeTakeFirst();
    if (row) this.follow(Number(row.offset_seconds));
    return this.state();
  }

  /**
   * Moves the clock forward by `seconds` (1 to MAX_ADVANCE_SECONDS). The addition happens in the database, so
   * two advances at once (from two processes) both count.
   */
  async advance(seconds: number): Promise<SandboxClockState> {
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_ADVANCE_SECONDS)
      throw new RangeError(`advanceSeconds must be an integer from 1 to ${MAX_ADVANCE_SECONDS}`);
    const updatedAt = this.base.now().toISOString();
    const r = await sql<{ offset_seconds: string | number }>`
      insert into sandbox_clock (id, offset_seconds, updated_at) values (1, ${seconds}, ${updatedAt}::timestamptz)
      on conflict (id) do update set offset_seconds = sandbox_clock.offset_seconds + excluded.offset_seconds,
                                     updated_at = excluded.updated_at
      returning offset_seconds`.execute(this.db);
    this.follow(Number(r.rows[0]?.offset_seconds ?? 0));
    return this.state();
  }

  private follow(stored: number): void {
    if (stored > this.offsetSeconds) this.offsetSeconds = stored;
  }
}

import { type Kysely, sql } from 'kysely';
import type { ReadDb } from './read-db.js';

/** A lease a runner holds, and what the renewals tell it. */
export type HeldLease = Readonly<{
  /** the lease's row in `worker_leases` */
  name: string;
  holder: string;
  ttlMs: number;
  /** before each renewal: false when the runner gives the lease up instead (it ends, and lets go) */
  renewing(): boolean;
  /** the renewal failed (`err`), or found the row another holder's or gone (null): the runner ends */
  lost(err: unknown): void;
  /**
   * the lease was renewed by a statement sent at `sentAt` (`performance.now()`): no other process can take it before
   * `sentAt` plus its TTL has passed (docs/event-store.md#kept-reads)
   */
  renewed?(sentAt: number): void;
}>;

/**
 * Renews every lease the runners of this process hold in one statement, every third of the shortest TTL among them
 * (docs/event-store.md#reactors-and-leases): 32 runners renewing one by one sent 32 statements together every 5 s,
 * which embedded stood in line on the database's one thread before the texts' statements. A lease is renewed only
 * where its row is still this holder's; one that is not is lost, as when it was renewed alone. Times are the
 * database's clock, which measures real time across processes.
 */
export class LeaseRenewals {
  private readonly held = new Map<string, HeldLease>();
  private timer: NodeJS.Timeout | null = null;
  private periodMs = 0;
  private running = false;

  constructor(private readonly db: Kysely<ReadDb>) {}

  /** Renews `lease` from now on; the answer stops that. */
  hold(lease: HeldLease): () => void {
    this.held.set(lease.holder, lease);
    this.schedule();
    return () => {
      if (this.held.get(lease.holder) === lease) this.held.delete(lease.holder);
      this.schedule();
    };
  }

  private schedule(): void {
    const period = this.held.size === 0 ? 0 : Math.max(100, Math.min(...[...this.held.values()].map((l) => l.ttlMs)) / 3);
    if (period === this.periodMs) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.periodMs = period;
    if (period > 0) this.timer = setInterval(() => void this.renew(), period).unref();
  }

  /** One round: each lease still renewing, in one statement (a round still running lets the next pass). */
  async renew(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const due = [...this.held.values()].filter((l) => l.renewing() && this.held.get(l.holder) === l);
      if (due.length === 0) return;
      let kept: Set<string>;
      const sentAt = performance.now();
      try {
        const r = await sql<{ holder: string }>`
          update worker_leases w set expires_at = now() + make_interval(secs => h.ttl_s)
            from unnest(${due.map((l) => l.name)}::text[], ${due.map((l) => l.holder)}::text[], ${due.map((l) => Math.max(1, Math.ceil(l.ttlMs / 1000)))}::int[])
                 as h(name, holder, ttl_s)
           where w.name = h.name and w.holder = h.holder
          returning w.holder`.execute(this.db);
        kept = new Set(r.rows.map((row) => row.holder));
      } catch (err) {
        for (const l of due) l.lost(err);
        return;
      }
      for (const l of due)
        if (kept.has(l.holder)) l.renewed?.(sentAt);
        else l.lost(null);
    } finally {
      this.running = false;
    }
  }
}

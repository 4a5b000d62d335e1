import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { ReadDb } from '../../projections/shared/read-db.js';
import type { BackgroundWorker } from '../workers.js';

/**
 * The worker processes alive now, so partitioned reactors share their partitions fairly
 * (docs/event-store.md#partitioned-reactors). Each process keeps a row `member:<id>` in `worker_leases`, renewed at
 * a third of its TTL; a process that stops deletes it, one that dies leaves it to expire. The count is the
 * database's view, refreshed with every renewal.
 */
export class ProcessMembership implements BackgroundWorker {
  readonly name = 'membership';
  readonly id = randomUUID();
  private live = 1;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Kysely<ReadDb>,
    private readonly ttlMs: number,
  ) {}

  async start(): Promise<void> {
    await this.beat().catch(() => undefined);
    this.timer = setInterval(() => void this.beat().catch(() => undefined), Math.max(100, this.ttlMs / 3));
    this.timer.unref();
  }

  /** How many of `partitions` this process should hold: an even share of the live processes. */
  share(partitions: number): number {
    return Math.ceil(partitions / Math.max(1, this.live));
  }

  private async beat(): Promise<void> {
    const ttl = `${Math.max(1, Math.ceil(this.ttlMs / 1000))} seconds`;
    await sql`insert into worker_leases (name, holder, expires_at) values (${`member:${this.id}`}, ${this.id}, now() + ${ttl}::interval)
              on conflict (name) do update set expires_at = excluded.expires_at`.execute(this.db);
    const r = await sql<{ n: string | number }>`
      select count(*) as n from worker_leases where name like 'member:%' and expires_at > now()`.execute(this.db);
    this.live = Math.max(1, Number(r.rows[0]?.n ?? 1));
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.db
      .deleteFrom('worker_leases')
      .where('name', '=', `member:${this.id}`)
      .execute()
      .catch(() => undefined);
  }
}

/** How a process's partitions of one reactor are held: at most its share, giving back what is over it. */
export class PartitionShare {
  private held = 0;
  private yielding = 0;
  constructor(
    private readonly membership: ProcessMembership,
    private readonly partitions: number,
  ) {}
  mayAcquire(): boolean {
    return this.held < this.membership.share(this.partitions);
  }
  acquired(): void {
    this.held++;
  }
  released(): void {
    this.held = Math.max(0, this.held - 1);
    this.yielding = Math.max(0, this.yielding - 1);
  }
  /** over the share (a process joined): as many partitions as are over it are given back, not all at once */
  mustYield(): boolean {
    if (this.held - this.yielding <= this.membership.share(this.partitions)) return false;
    this.yielding++;
    return true;
  }
}

/** FNV-1a over the stream name: a stream's events always fall in the same partition, so they stay in order. */
export function partitionOf(stream: string, partitions: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < stream.length; i++) {
    h ^= stream.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % partitions;
}

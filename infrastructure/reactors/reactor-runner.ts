import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { START, type Checkpoint, type EventStorePort, type RecordedEvent, type Subscription } from '../../application/ports/event-store.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import type { BackgroundWorker } from '../workers.js';

/** What a process manager offers the runner: the event types it reacts to and a batch handler. */
export interface Reactor {
  readonly name: string;
  readonly handles: readonly string[];
  /** Performs the batch's effects; must be idempotent (a batch is redelivered after a crash or an error). */
  handleBatch(batch: readonly RecordedEvent[]): Promise<void>;
}

interface ReactorDb {
  reactor_checkpoints: { name: string; checkpoint: string; updated_at: Date | string };
  worker_leases: { name: string; holder: string; expires_at: Date | string };
}

export class LeaseLostError extends Error {
  constructor(name: string) {
    super(`lease on ${name} lost`);
    this.name = 'LeaseLostError';
  }
}

/**
 * Runs a reactor as a catch-up subscription from its own checkpoint (`reactor_checkpoints`). Unlike a
 * projector, its effects leave the database (carrier, other streams), so there is no transaction around a
 * batch: the effects run first, then the checkpoint moves (compare-and-set). A crash in between redelivers
 * the batch, which the reactor's idempotence absorbs: at-least-once with idempotent steps.
 *
 * Only one process drives a reactor at a time: the runner holds a lease row (`worker_leases`) renewed at a
 * third of its TTL, and stops when it cannot renew. Another worker process takes over once the lease
 * expires (after a crash, at most one TTL later). Lease times are the database's clock: they measure real
 * elapsed time between processes, which the application Clock (movable in tests) is not for.
 */
export class ReactorRunner implements BackgroundWorker {
  readonly name: string;
  private readonly holder = randomUUID();
  private readonly db: Kysely<ReactorDb>;
  private stopped = true;
  private main: Promise<void> | null = null;
  private sub: Subscription | null = null;
  private wake: (() => void) | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  private endCurrent: ((reason: unknown) => void) | null = null;

  constructor(
    private readonly store: EventStorePort,
    db: Kysely<unknown>,
    private readonly reactor: Reactor,
    private readonly log: LoggerPort,
    private readonly o: { leaseTtlMs: number; retryDelayMs?: number; batchSize?: number },
  ) {
    this.name = `reactor:${reactor.name}`;
    this.db = db as Kysely<ReactorDb>;
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.main = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    this.endCurrent?.(null);
    await this.main;
    await this.db.deleteFrom('worker_leases').where('name', '=', this.reactor.name).where('holder', '=', this.holder).execute().catch(() => undefined);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      const self = this;
      function done() { clearTimeout(t); self.wake = null; resolve(); }
      this.wake = done;
    });
  }

  private async tryLease(): Promise<boolean> {
    const ttl = `${Math.max(1, Math.ceil(this.o.leaseTtlMs / 1000))} seconds`;
    const r = await sql<{ holder: string }>`
      insert into worker_leases (name, holder, expires_at) values (${this.reactor.name}, ${this.holder}, now() + ${ttl}::interval)
      on conflict (name) do update set holder = excluded.holder, expires_at = excluded.expires_at
      where worker_leases.holder = excluded.holder or worker_leases.expires_at < now()
      returning holder`.execute(this.db);
    return r.rows.length === 1;
  }

  private async checkpoint(): Promise<Checkpoint> {
    await this.db.insertInto('reactor_checkpoints').values({ name: this.reactor.name, checkpoint: START, updated_at: new Date() })
      .onConflict((oc) => oc.column('name').doNothing()).execute();
    return (await this.db.selectFrom('reactor_checkpoints').select('checkpoint').where('name', '=', this.reactor.name).executeTakeFirstOrThrow()).checkpoint;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      let leased = false;
      try {
        leased = await this.tryLease();
      } catch (err) {
        this.log.warn({ err, reactor: this.reactor.name }, 'reactor lease check failed');
      }
      if (!leased) {
        await this.sleep(Math.max(200, this.o.leaseTtlMs / 3));
        continue;
      }
      const err = await this.runLeased();
      if (this.stopped) break;
      failures++;
      const delay = Math.min((this.o.retryDelayMs ?? 500) * 2 ** Math.min(failures - 1, 6), 30_000);
      this.log.error({ err, reactor: this.reactor.name, retryInMs: delay }, 'reactor stopped; restarting from its checkpoint');
      await this.sleep(delay);
    }
  }

  /** Subscribes while holding the lease; resolves with the reason it ended (error, lost lease) or null on stop. */
  private async runLeased(): Promise<unknown> {
    let cursor = await this.checkpoint();
    return new Promise<unknown>((resolve) => {
      let ended = false;
      const end = (reason: unknown) => {
        if (ended) return;
        ended = true;
        this.endCurrent = null;
        if (this.renewTimer) clearInterval(this.renewTimer);
        this.renewTimer = null;
        const sub = this.sub;
        this.sub = null;
        void (sub ? sub.stop() : Promise.resolve()).then(() => resolve(reason));
      };
      this.endCurrent = end;
      this.renewTimer = setInterval(() => {
        this.tryLease().then((ok) => { if (!ok) end(new LeaseLostError(this.reactor.name)); }, (err: unknown) => end(err));
      }, Math.max(100, this.o.leaseTtlMs / 3));
      this.sub = this.store.subscribe(
        { after: cursor, filter: { eventTypes: this.reactor.handles }, batchSize: this.o.batchSize ?? 100, onError: (err) => end(err) },
        async (batch) => {
          await this.reactor.handleBatch(batch);
          const to = batch.at(-1)!.checkpoint;
          const r = await this.db.updateTable('reactor_checkpoints').set({ checkpoint: to, updated_at: new Date() })
            .where('name', '=', this.reactor.name).where('checkpoint', '=', cursor).executeTakeFirst();
          if (r.numUpdatedRows !== 1n) throw new LeaseLostError(this.reactor.name);
          cursor = to;
        },
      );
      if (this.stopped) end(null);
    });
  }
}

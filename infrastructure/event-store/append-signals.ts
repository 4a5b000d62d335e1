import { EventEmitter } from 'node:events';
import pg from 'pg';
import { type Checkpoint, compareCheckpoints, type EventFilter } from '../../application/ports/event-store.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';

/**
 * What was appended, told to subscriptions so they read at once instead of at their next poll
 * (docs/event-store.md#wake-ups). A notice is a hint, never the data: a subscription still reads the log, and a
 * lost notice only delays an event until the next poll.
 */
export type AppendNotice = Readonly<{
  /** the newest checkpoint appended (for several coalesced appends, the newest of them) */
  checkpoint: Checkpoint;
  /** the event types and stream categories appended; null: unknown, wake every subscription */
  types: readonly string[] | null;
  categories: readonly string[] | null;
}>;

/** Whether a subscription with this filter has anything to read after the notice. */
export const concerns = (n: AppendNotice, filter: EventFilter | undefined): boolean => {
  if (!filter) return true;
  if ('eventTypes' in filter) return n.types === null || n.types.some((t) => filter.eventTypes.includes(t));
  return n.categories === null || n.categories.some((c) => filter.streamCategories.includes(c));
};

/**
 * A projector committed a batch up to this checkpoint (docs/event-store.md#wake-ups). `types`: the batch's event types,
 * told only to this process's own listeners (another process's notice carries none: its batches are unknown here).
 */
export type ProjectedNotice = Readonly<{ projector: string; checkpoint: Checkpoint; types?: readonly string[] }>;

export interface AppendSignals {
  /** readies the signals before any subscription listens (a server's LISTEN connection) */
  start(): Promise<void>;
  /** an append of this process committed */
  publish(n: AppendNotice): void;
  /** every notice, of this process and (on a server) of the others; answers the unsubscribe */
  listen(fn: (n: AppendNotice) => void): () => void;
  /** a projector of this process advanced: what waits on read models (read-your-writes, the delivery worker) */
  publishProjected(n: ProjectedNotice): void;
  listenProjected(fn: (n: ProjectedNotice) => void): () => void;
  /**
   * a lease this process gave back to share the work (a reactor's partition): the other processes try it at once
   * instead of at their next try (docs/event-store.md#partitioned-reactors)
   */
  publishFreed(lease: string): void;
  listenFreed(fn: (lease: string) => void): () => void;
  close(): Promise<void>;
}

/** Within one process: PGlite has no other writer, so the process's own appends are all there is to hear. */
export class InProcessSignals implements AppendSignals {
  private readonly emitter = new EventEmitter();
  constructor() {
    this.emitter.setMaxListeners(0);
  }
  async start(): Promise<void> {}
  publish(n: AppendNotice): void {
    this.emitter.emit('notice', n);
  }
  listen(fn: (n: AppendNotice) => void): () => void {
    this.emitter.on('notice', fn);
    return () => this.emitter.off('notice', fn);
  }
  publishProjected(n: ProjectedNotice): void {
    this.emitter.emit('projected', n);
  }
  listenProjected(fn: (n: ProjectedNotice) => void): () => void {
    this.emitter.on('projected', fn);
    return () => this.emitter.off('projected', fn);
  }
  publishFreed(lease: string): void {
    this.emitter.emit('freed', lease);
  }
  listenFreed(fn: (lease: string) => void): () => void {
    this.emitter.on('freed', fn);
    return () => this.emitter.off('freed', fn);
  }
  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

export const NOTICE_CHANNEL = 'agent_platform_events';
/** what a process says on the channel once it listens: the others then know someone hears their notices */
const HELLO = JSON.stringify({ h: 1 });
/** how long what was seen of the other processes' listening connections holds before it is looked at again */
const OTHERS_SEEN_MS = 5_000;
/** how the listening connection shows in pg_stat_activity */
export const APPLICATION_NAME = 'agent-platform-event-notices';
/** NOTIFY payloads are at most 8000 bytes; a notice with more names says "unknown" instead */
const MAX_PAYLOAD = 7900;

const encode = (n: AppendNotice): string => {
  const s = JSON.stringify({ c: n.checkpoint, t: n.types, s: n.categories });
  return s.length <= MAX_PAYLOAD ? s : JSON.stringify({ c: n.checkpoint, t: null, s: null });
};
const decode = (payload: string | undefined): AppendNotice | ProjectedNotice[] | { freed: string[] } | 'hello' | null => {
  try {
    const o = JSON.parse(payload ?? '') as { c?: unknown; t?: unknown; s?: unknown; p?: unknown; f?: unknown; h?: unknown };
    if (o.h === 1) return 'hello';
    if (Array.isArray(o.f)) return { freed: o.f.filter((x): x is string => typeof x === 'string') };
    if (o.p && typeof o.p === 'object')
      return Object.entries(o.p as Record<string, unknown>).flatMap(([projector, c]) =>
        typeof c === 'string' && /^\d+\/\d+$/.test(c) ? [{ projector, checkpoint: c }] : [],
      );
    if (typeof o.c !== 'string' || !/^\d+\/\d+$/.test(o.c)) return null;
    const names = (v: unknown) => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null);
    return { checkpoint: o.c, types: names(o.t), categories: names(o.s) };
  } catch {
    return null;
  }
};

const union = (a: readonly string[] | null, b: readonly string[] | null) => (a === null || b === null ? null : [...new Set([...a, ...b])]);
const merge = (a: AppendNotice | null, b: AppendNotice): AppendNotice =>
  a === null
    ? b
    : {
        checkpoint: compareCheckpoints(a.checkpoint, b.checkpoint) >= 0 ? a.checkpoint : b.checkpoint,
        types: union(a.types, b.types),
        categories: union(a.categories, b.categories),
      };

/**
 * On a PostgreSQL server: one connection per process LISTENs, and the same connection NOTIFYs the process's
 * appends to the others after they commit. The NOTIFY is not inside the append's transaction on purpose:
 * PostgreSQL serialises the commits of notifying transactions (a database-wide lock held through the commit),
 * which cost a third of the throughput of eight concurrent writers when we measured it (docs/event-store.md).
 * Appends that commit while a NOTIFY is on its way are coalesced into the next one. Local listeners hear the
 * process's own appends at once, without the round trip. After the connection is lost and back, every
 * listener is woken with an "unknown" notice, since notices sent meanwhile are gone. A process that no other one
 * hears notifies nothing: it looks for the others' listening connections when it connects and every few seconds
 * while it has something to tell, and a process that starts listening says so on the channel.
 */
export class PgNotifySignals implements AppendSignals {
  private readonly local = new InProcessSignals();
  private client: pg.Client | null = null;
  private pending: AppendNotice | null = null;
  private pendingProjected = new Map<string, Checkpoint>();
  private pendingFreed = new Set<string>();
  private sending = false;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  private failures = 0;
  private readonly dead = new WeakSet<pg.Client>();
  /** whether another process's listening connection was seen, and when (null: not looked yet) */
  private others: { some: boolean; at: number } | null = null;
  /** hellos heard so far: one heard while a look was on its way wins over what the look saw */
  private hellos = 0;

  constructor(
    private readonly url: string,
    private readonly log: LoggerPort,
  ) {}

  /** Connects and listens; resolves once listening, or after the first failure (it keeps retrying). */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 10_000, application_name: APPLICATION_NAME });
    /** this connection's server process: its own NOTIFY comes back to it, and local listeners heard that already */
    let self: number | null = null;
    client.on('notification', (m) => {
      if (m.channel !== NOTICE_CHANNEL || m.processId === self) return;
      const n = decode(m.payload);
      if (n === 'hello') {
        this.hellos += 1;
        this.others = { some: true, at: performance.now() };
      } else if (Array.isArray(n)) for (const p of n) this.local.publishProjected(p);
      else if (n && 'freed' in n) for (const lease of n.freed) this.local.publishFreed(lease);
      else if (n) this.local.publish(n);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      self = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid ?? null;
      await client.query(`listen ${NOTICE_CHANNEL}`);
      await client.query('select pg_notify($1, $2)', [NOTICE_CHANNEL, HELLO]);
      await this.lookForOthers(client);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    const reconnected = this.failures > 0;
    this.client = client;
    this.failures = 0;
    if (reconnected) this.local.publish({ checkpoint: '0/0', types: null, categories: null });
    void this.flush();
  }

  private lost(client: pg.Client, err: unknown): void {
    if (this.dead.has(client)) return; // 'error' and then 'end' for the same loss
    this.dead.add(client);
    if (this.client === client) this.client = null;
    client.removeAllListeners('notification');
    void client.end().catch(() => undefined);
    if (this.closed || this.retry) return;
    this.failures++;
    const delay = Math.min(100 * 2 ** Math.min(this.failures - 1, 8), 10_000);
    if (this.failures === 1) this.log.warn({ err }, 'event notifications lost; subscriptions poll until they are back');
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.connect();
    }, delay);
    this.retry.unref();
  }

  /**
   * Whether another process listens on this database (its connection's `application_name` is ours; a NOTIFY reaches
   * the listeners of its own database only), as the server shows now.
   */
  private async lookForOthers(client: pg.Client): Promise<void> {
    const hellos = this.hellos;
    const r = await client.query<{ some: boolean }>(
      `select exists (select 1 from pg_stat_activity
         where application_name = $1 and datname = current_database() and pid <> pg_backend_pid()) as some`,
      [APPLICATION_NAME],
    );
    this.others = { some: r.rows[0]?.some !== false || this.hellos !== hellos, at: performance.now() };
  }

  /** No other process was seen listening, lately: a notice would be heard by nobody. */
  private alone(): boolean {
    return this.others !== null && !this.others.some && performance.now() - this.others.at < OTHERS_SEEN_MS;
  }

  publish(n: AppendNotice): void {
    this.local.publish(n);
    if (this.alone()) return;
    this.pending = merge(this.pending, n);
    void this.flush();
  }

  private async flush(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      while ((this.pending || this.pendingProjected.size > 0 || this.pendingFreed.size > 0) && this.client && !this.closed) {
        const client = this.client;
        if (this.others === null || performance.now() - this.others.at >= OTHERS_SEEN_MS) {
          try {
            await this.lookForOthers(client);
          } catch {
            break; // the connection's own handlers reconnect
          }
        }
        const payloads: string[] = [];
        if (this.pending) payloads.push(encode(this.pending));
        if (this.pendingProjected.size > 0) payloads.push(JSON.stringify({ p: Object.fromEntries(this.pendingProjected) }));
        if (this.pendingFreed.size > 0) payloads.push(JSON.stringify({ f: [...this.pendingFreed] }));
        this.pending = null;
        this.pendingProjected = new Map();
        this.pendingFreed = new Set();
        if (!this.others?.some) continue; // heard by nobody
        try {
          for (const payload of payloads) await client.query('select pg_notify($1, $2)', [NOTICE_CHANNEL, payload]);
        } catch {
          // the other processes poll meanwhile; the connection's own handlers reconnect
          break;
        }
      }
    } finally {
      this.sending = false;
    }
  }

  listen(fn: (n: AppendNotice) => void): () => void {
    return this.local.listen(fn);
  }

  publishProjected(n: ProjectedNotice): void {
    this.local.publishProjected(n);
    if (this.alone()) return;
    const before = this.pendingProjected.get(n.projector);
    if (!before || compareCheckpoints(n.checkpoint, before) > 0) this.pendingProjected.set(n.projector, n.checkpoint);
    void this.flush();
  }

  listenProjected(fn: (n: ProjectedNotice) => void): () => void {
    return this.local.listenProjected(fn);
  }

  publishFreed(lease: string): void {
    this.local.publishFreed(lease);
    if (this.alone()) return;
    this.pendingFreed.add(lease);
    void this.flush();
  }

  listenFreed(fn: (lease: string) => void): () => void {
    return this.local.listenFreed(fn);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
    await this.local.close();
  }
}

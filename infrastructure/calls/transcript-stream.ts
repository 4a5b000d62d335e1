import type { Response } from 'express';
import type { CallProgressView, CallQueries, CallTurnView } from '../../application/calls/call-queries.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { DomainError } from '../../domain/shared/errors.js';

export type TranscriptStreamOptions = Readonly<{
  /** a `: heartbeat` comment this often keeps proxies from closing a quiet stream */
  heartbeatMs: number;
}>;

/** What a call looks like for its watchers: a text that changes when a turn is added or the call ends. */
export type CallVersions = (callIds: readonly string[]) => Promise<ReadonlyMap<string, string>>;

/**
 * The open transcript streams of this process (docs/calls.md#transcripts-and-the-live-stream): one watcher per
 * stream, woken when its call changes in the read model. Every time the calls projector advances (in this process,
 * or told by another through the database's notices) and on a slow timer besides (a missed notice costs at most
 * `fallbackMs`), one query reads the version of every watched call, and only the streams whose call changed read
 * it. So 500 open streams cost one query per projection, not two queries each every 250 ms. Each API key may hold
 * `perKey` open streams in this process; one more is refused 429 (docs/limits.md).
 */
export class TranscriptFeed {
  private readonly watchers = new Map<string, Set<() => void>>();
  private readonly versions = new Map<string, string>();
  private readonly open = new Map<string, number>();
  private refreshing: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private unlisten: (() => void) | null = null;

  constructor(
    private readonly versionsOf: CallVersions,
    private readonly listen: (wake: () => void) => () => void,
    private readonly log: LoggerPort,
    readonly o: Readonly<{ perKey: number; fallbackMs: number }>,
  ) {}

  /** Takes one of the key's stream slots; the answer frees it. Refuses when the key holds all of them. */
  admit(key: string): () => void {
    const n = this.open.get(key) ?? 0;
    if (n >= this.o.perKey)
      throw new DomainError(
        'TRANSCRIPT_STREAM_LIMIT',
        `Too many open transcript streams: this API key has ${n} open, the limit is ${this.o.perKey} (TRANSCRIPT_STREAMS_PER_KEY). Close one and try again.`,
      );
    this.open.set(key, n + 1);
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      const left = (this.open.get(key) ?? 1) - 1;
      if (left <= 0) this.open.delete(key);
      else this.open.set(key, left);
    };
  }

  /** Calls `fn` whenever the call's version changes; answers the unwatch. */
  watch(callId: string, fn: () => void): () => void {
    const set = this.watchers.get(callId) ?? new Set();
    set.add(fn);
    this.watchers.set(callId, set);
    this.started();
    return () => {
      set.delete(fn);
      if (set.size === 0) {
        this.watchers.delete(callId);
        this.versions.delete(callId);
      }
      if (this.watchers.size === 0) this.stopped();
    };
  }

  private started(): void {
    if (this.unlisten) return;
    this.unlisten = this.listen(() => this.refresh());
    this.timer = setInterval(() => this.refresh(), this.o.fallbackMs);
    this.timer.unref();
  }

  private stopped(): void {
    this.unlisten?.();
    this.unlisten = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One read of every watched call's version at a time; a wake-up meanwhile reads once more after it. */
  private refresh(): void {
    if (this.refreshing) {
      this.again = true;
      return;
    }
    this.refreshing = this.readVersions()
      .catch((err: unknown) => this.log.warn({ err }, 'transcript streams could not read their calls; next try on the next wake-up'))
      .finally(() => {
        this.refreshing = null;
        if (this.again) {
          this.again = false;
          this.refresh();
        }
      });
  }

  private async readVersions(): Promise<void> {
    const ids = [...this.watchers.keys()];
    for (let i = 0; i < ids.length; i += 500) {
      const now = await this.versionsOf(ids.slice(i, i + 500));
      for (const [callId, version] of now) {
        if (this.versions.get(callId) === version) continue;
        this.versions.set(callId, version);
        for (const fn of this.watchers.get(callId) ?? []) fn();
      }
    }
  }
}

/** What the `ended` event carries. */
const endOf = (p: CallProgressView) => ({
  callId: p.callId,
  status: p.status,
  endedAt: p.endedAt,
  durationSeconds: p.durationSeconds,
  disconnectionReason: p.disconnectionReason,
});

/**
 * `GET /v1/calls/{id}/transcript/stream` (docs/calls.md#transcripts-and-the-live-stream): Server-Sent Events of
 * one call. `connected` first; then a `turn` per turn after `afterSeq` (the Last-Event-ID of a reconnecting
 * client), the recorded ones at once and new ones as the projector writes them; `ended` once the call is over,
 * and the stream closes. Every event's `id` is the sequence number of the latest turn sent, so a client that
 * reconnects receives only later turns. A call the account does not have is a 404 before any byte is sent, and a
 * key over its limit of open streams a 429. The stream reads its call only when the feed says it changed.
 */
export async function streamTranscript(
  res: Response,
  d: Readonly<{ queries: CallQueries; feed: TranscriptFeed; log: LoggerPort }>,
  q: Readonly<{ accountId: string; key: string; callId: string; afterSeq: number }>,
  o: TranscriptStreamOptions,
): Promise<void> {
  const { accountId, callId } = q;
  const release = d.feed.admit(q.key);
  let unwatch: () => void = () => undefined;
  let heartbeat: NodeJS.Timeout | null = null;
  try {
    let progress = await d.queries.progress(accountId, callId);
    if (!progress) throw new DomainError('CALL_NOT_FOUND', 'Call not found');

    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no'); // nginx: pass each event on as it comes
    res.flushHeaders();

    const gone = new AbortController();
    let changed = true;
    let wake: (() => void) | null = null;
    const poke = () => {
      changed = true;
      wake?.();
    };
    res.on('close', () => {
      gone.abort();
      wake?.();
    });
    // a write racing the client's disconnect fails on the closed socket: that is the end of the stream, not an error
    res.on('error', () => gone.abort());
    unwatch = d.feed.watch(callId, poke);
    const write = (chunk: string) => {
      if (!gone.signal.aborted && !res.destroyed) res.write(chunk);
    };
    heartbeat = setInterval(() => write(': heartbeat\n\n'), o.heartbeatMs);
    let last = q.afterSeq;
    const send = (event: string, data: unknown) => write(`id: ${last}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    const sendTurn = (t: CallTurnView) => {
      last = t.seq;
      send('turn', { callId, ...t });
    };

    try {
      send('connected', { callId, status: progress.status });
      for (;;) {
        changed = false;
        // the end is read before the turns: a call seen ended has every turn committed with or before its end
        const ended = progress.status !== 'in-progress';
        for (const t of await d.queries.turns(accountId, callId, last)) sendTurn(t);
        if (ended) {
          send('ended', endOf(progress));
          return;
        }
        if (!changed) await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
        if (gone.signal.aborted) return;
        const next = await d.queries.progress(accountId, callId);
        if (!next) return;
        progress = next;
      }
    } catch (err) {
      // the answer has begun: an error can only end the stream (the client reconnects with its Last-Event-ID)
      d.log.warn({ err, callId }, 'transcript stream stopped by an error');
    }
  } finally {
    unwatch();
    release();
    if (heartbeat) clearInterval(heartbeat);
    if (res.headersSent && !res.writableEnded) res.end();
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import type { Response } from 'express';
import type { CallProgressView, CallQueries, CallTurnView } from '../../application/calls/call-queries.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { DomainError } from '../../domain/shared/errors.js';

export type TranscriptStreamOptions = Readonly<{
  /** how often the read model is asked for new turns and the end */
  pollMs: number;
  /** a `: heartbeat` comment this often keeps proxies from closing a quiet stream */
  heartbeatMs: number;
}>;

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
 * reconnects receives only later turns. A call the account does not have is a 404 before any byte is sent.
 *
 * The read model is polled: a turn appears on the stream within `pollMs` of its projection, whichever process
 * wrote it. Everything stops when the client goes away.
 */
export async function streamTranscript(
  res: Response,
  d: Readonly<{ queries: CallQueries; log: LoggerPort }>,
  q: Readonly<{ accountId: string; callId: string; afterSeq: number }>,
  o: TranscriptStreamOptions,
): Promise<void> {
  const { accountId, callId } = q;
  let progress = await d.queries.progress(accountId, callId);
  if (!progress) throw new DomainError('CALL_NOT_FOUND', 'Call not found');

  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no'); // nginx: pass each event on as it comes
  res.flushHeaders();

  const gone = new AbortController();
  res.on('close', () => gone.abort());
  // a write racing the client's disconnect fails on the closed socket: that is the end of the stream, not an error
  res.on('error', () => gone.abort());
  const write = (chunk: string) => {
    if (!gone.signal.aborted && !res.destroyed) res.write(chunk);
  };
  const heartbeat = setInterval(() => write(': heartbeat\n\n'), o.heartbeatMs);
  let last = q.afterSeq;
  const send = (event: string, data: unknown) => write(`id: ${last}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const sendTurn = (t: CallTurnView) => {
    last = t.seq;
    send('turn', { callId, ...t });
  };

  try {
    send('connected', { callId, status: progress.status });
    for (;;) {
      // the end is read before the turns: a call seen ended has every turn committed with or before its end
      const ended = progress.status !== 'in-progress';
      for (const t of await d.queries.turns(accountId, callId, last)) sendTurn(t);
      if (ended) {
        send('ended', endOf(progress));
        return;
      }
      await sleep(o.pollMs, undefined, { signal: gone.signal }).catch(() => undefined);
      if (gone.signal.aborted) return;
      const next = await d.queries.progress(accountId, callId);
      if (!next) return;
      progress = next;
    }
  } catch (err) {
    // the answer has begun: an error can only end the stream (the client reconnects with its Last-Event-ID)
    d.log.warn({ err, callId }, 'transcript stream stopped by an error');
  } finally {
    clearInterval(heartbeat);
    if (!res.writableEnded) res.end();
  }
}

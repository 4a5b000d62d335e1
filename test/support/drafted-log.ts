import { randomUUID } from 'node:crypto';
import { makeCheckpoint, type RecordedEvent } from '../../application/ports/event-store.port.js';

/** An event as a test drafts it: its stream, type, data and account. */
export type Draft = { stream: string; type: string; data: Record<string, unknown>; accountId: string };

/**
 * A log of drafted events, as the store would record them: each stream's revisions counted in the order they are
 * pushed, global positions one after the other.
 */
export function draftedLog(): { readonly log: RecordedEvent[]; push(d: Draft, createdAt: string): void } {
  const revisions = new Map<string, number>();
  const log: RecordedEvent[] = [];
  return {
    log,
    push(d, createdAt) {
      const revision = revisions.get(d.stream) ?? 0;
      revisions.set(d.stream, revision + 1);
      const position = BigInt(log.length + 1);
      log.push({
        id: randomUUID(),
        type: d.type,
        data: d.data,
        metadata: { accountId: d.accountId, correlationId: 'c', causationId: null, requestId: null, actor: 'system:test' },
        streamName: d.stream,
        streamRevision: BigInt(revision),
        globalPosition: position,
        checkpoint: makeCheckpoint(1000n + position, position),
        createdAt,
      });
    },
  };
}

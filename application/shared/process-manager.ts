import type { Event } from '../../domain/shared/types.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { RequestContext } from './context.js';

/**
 * What the reactor runner drives (docs/architecture.md, "Side effects"): the event types a reactor handles and
 * a batch handler that performs their effects idempotently. A batch is redelivered after a crash or an error,
 * and the runner's checkpoint moves only after the batch is done.
 */
export interface Reactor {
  readonly name: string;
  readonly handles: readonly string[];
  handleBatch(batch: readonly RecordedEvent[]): Promise<void>;
  /**
   * What must be handled in log order (docs/event-store.md#partitioned-reactors): events with the same key go to
   * the same partition. Without it, the event's stream.
   */
  partitionKey?(e: RecordedEvent): string;
  /**
   * Reactors whose work this one took over (docs/event-store.md#partitioned-reactors): on its first run it starts
   * where the furthest behind of them was, so nothing they had still to handle is skipped.
   */
  readonly replaces?: readonly string[];
}

/**
 * The one shape of work that leaves the process. A process manager declares the events that start or move a
 * process (never the facts it records itself: it drives a process to the end in one go, reading the process's
 * stream for where it is), names the process instance an event belongs to, and performs each step idempotently,
 * keyed by that instance and the step, recording each outcome as a fact on the instance's stream.
 *
 * Events of one instance are handled in log order; instances are handled side by side. Each reaction acts as
 * `system:<name>` with the event as its cause.
 */
export abstract class ProcessManager<E extends Event> implements Reactor {
  abstract readonly name: string;
  abstract readonly handles: readonly E['type'][];

  /** The process instance (usually its stream) that an event moves. */
  protected abstract instanceOf(e: RecordedEvent<E>): string;

  /** Moves the instance as far as it goes now. Must be idempotent: the same event may come again. */
  protected abstract react(e: RecordedEvent<E>, ctx: RequestContext): Promise<void>;

  /** An instance's events are handled in log order, so they share a partition. */
  partitionKey(e: RecordedEvent): string {
    return this.instanceOf(e as RecordedEvent<E>);
  }

  get actor(): string {
    return `system:${this.name}`;
  }

  async handleBatch(batch: readonly RecordedEvent[]): Promise<void> {
    const handled = new Set<string>(this.handles);
    const byInstance = new Map<string, RecordedEvent<E>[]>();
    for (const raw of batch) {
      if (!handled.has(raw.type)) continue;
      // the runner's filter and `handles` agree on the type, so the event is one of E
      const e = raw as RecordedEvent<E>;
      const key = this.instanceOf(e);
      const events = byInstance.get(key) ?? [];
      events.push(e);
      byInstance.set(key, events);
    }
    await Promise.all(
      [...byInstance.values()].map(async (events) => {
        for (const e of events) await this.react(e, this.contextOf(e));
      }),
    );
  }

  /** The context a reaction acts in: the event's account and correlation, this process as the actor. */
  protected contextOf(e: RecordedEvent<E>, accountId = e.metadata.accountId): RequestContext {
    return { accountId, requestId: e.metadata.requestId, correlationId: e.metadata.correlationId, actor: this.actor, causationId: e.id };
  }
}

import type { Decider, Event } from '../../domain/shared/types.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { CommandExecutor } from './execute.js';

export type Outcome<E extends Event, S> = Readonly<{ state: S; events: RecordedEvent<E>[]; timedOut: boolean }>;

/**
 * For a request that must answer with what a process manager did: polls the process's stream until `done` holds
 * or `timeoutMs` has passed (the request then answers that the work goes on in the background). It waits by
 * sleeping, not by reading the Clock, so it also ends under a stopped test clock.
 */
export async function awaitOutcome<C, E extends Event, S>(
  exec: CommandExecutor,
  decider: Decider<C, E, S>,
  stream: string,
  done: (state: S, events: readonly RecordedEvent<E>[]) => boolean,
  timeoutMs: number,
): Promise<Outcome<E, S>> {
  let waited = 0;
  let pause = 5;
  for (;;) {
    const { state, events } = await exec.load(decider, stream);
    if (done(state, events)) return { state, events, timedOut: false };
    if (waited >= timeoutMs) return { state, events, timedOut: true };
    await new Promise((resolve) => setTimeout(resolve, pause));
    waited += pause;
    pause = Math.min(pause * 2, 25);
  }
}

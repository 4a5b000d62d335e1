import type { Checkpoint } from './event-store.port.js';

/**
 * Read-your-writes: wait until every projector that handles one of `eventTypes` has passed `checkpoint`. A lookup
 * that reads one table names it (`tables`), and waits only for the projectors that write it, not for every
 * projector of those events (the analytics ones among them).
 */
export interface ReadModelsPort {
  waitFor(checkpoint: Checkpoint, eventTypes: readonly string[], o?: { tables?: readonly string[] }): Promise<void>;
}

import type { Checkpoint } from './event-store.port.js';

/**
 * Read-your-writes: wait until every projector that handles one of `eventTypes` has passed `checkpoint`. A lookup
 * that reads one table names it (`tables`), and waits only for the projectors that write it, not for every
 * projector of those events (the analytics ones among them).
 */
export interface ReadModelsPort {
  waitFor(checkpoint: Checkpoint, eventTypes: readonly string[], o?: { tables?: readonly string[] }): Promise<void>;
  /**
   * For a fact that may not even be written yet (a provider's report can overtake the record of the send it is
   * about): asks `find` again each time a projector writing one of `tables` advances, for at most `withinMs`, and
   * answers what it found, or null.
   */
  waitForRow<T>(find: () => Promise<T | null>, o: { tables: readonly string[]; withinMs: number }): Promise<T | null>;
}

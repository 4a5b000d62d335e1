import type { Checkpoint } from './event-store.port.js';

/** Read-your-writes: wait until every projector that handles one of `eventTypes` has passed `checkpoint`. */
export interface ReadModelsPort {
  waitFor(checkpoint: Checkpoint, eventTypes: readonly string[]): Promise<void>;
}

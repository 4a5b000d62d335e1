import { EventStoreDBClient } from '@eventstore/db-client';
import { RESET_STREAM } from './esdb-test-server/server.js';

/**
 * Starts a test installation on an empty event store, as its PostgreSQL tables are emptied: with EVENTSTORE_URL
 * on the in-repo test server, deleting `RESET_STREAM` empties it. A real EventStoreDB cannot be emptied; there
 * the delete does nothing that matters, and the suite needs a fresh server (docs/testing.md#eventstoredb).
 */
export async function resetTestEventStore(): Promise<void> {
  const url = process.env.EVENTSTORE_URL;
  if (!url) return;
  const client = EventStoreDBClient.connectionString(url);
  try {
    await client.deleteStream(RESET_STREAM);
  } catch {
    // a real server: the reserved name is an ordinary stream that does not exist
  } finally {
    await client.dispose();
  }
}

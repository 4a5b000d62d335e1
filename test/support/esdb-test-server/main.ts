/**
 * Starts the EventStoreDB test server (`server.ts`) on PORT (default 2113) and prints its connection string, so
 * the contract suite can run against it:
 *
 *   npx tsx test/support/esdb-test-server/main.ts &
 *   EVENTSTORE_URL='esdb://127.0.0.1:2113?tls=false' npm test
 *
 * HOST (default 127.0.0.1) picks the interface. Stops on SIGINT/SIGTERM. A test instrument only.
 */
import { startEsdbTestServer } from './server.js';

const port = Number(process.env.PORT ?? 2113);
if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a TCP port, got ${process.env.PORT}`);
const server = await startEsdbTestServer({ port, host: process.env.HOST ?? '127.0.0.1' });
console.log(server.url);

const shutdown = () => {
  void server.stop().then(() => process.exit(0));
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);

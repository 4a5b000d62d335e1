import type { PGlite } from '@electric-sql/pglite';

/**
 * Runs one wire-protocol message on PGlite and answers its raw answer, errors included (the caller parses it). PGlite
 * also parses every answer it writes and keeps the parsed messages until its next `execProtocol`, which clears them
 * as it begins; `execProtocolRaw` never does, so a database used only through it kept every row it ever answered
 * (docs/event-store.md#pglite-on-its-own-thread). `execProtocol` without throwing answers the same raw bytes.
 */
export const runMessage = (client: PGlite, message: Uint8Array): Promise<Uint8Array> =>
  client.runExclusive(async () => (await client.execProtocol(message, { throwOnError: false })).data);

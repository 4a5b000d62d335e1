import { PGlite } from '@electric-sql/pglite';

/**
 * Runs one wire-protocol message on PGlite and answers its raw answer, errors included (the caller parses it). PGlite
 * also parses every answer it writes and keeps the parsed messages until its next `execProtocol`, which clears them
 * as it begins; `execProtocolRaw` never does, so a database used only through it kept every row it ever answered
 * (docs/event-store.md#pglite-on-its-own-thread). `execProtocol` without throwing answers the same raw bytes.
 */
export const runMessage = (client: PGlite, message: Uint8Array): Promise<Uint8Array> =>
  client.runExclusive(async () => (await client.execProtocol(message, { throwOnError: false })).data);

/**
 * PostgreSQL's settings for the embedded database beyond PGlite's own (docs/event-store.md#wal-files). A new WAL file
 * is made without writing 16 MB of zeros first: in PGlite that write took the database's thread for 50-60 ms once
 * every 16 MB of WAL, and every statement waiting behind it.
 */
const SETTINGS = ['-c', 'wal_init_zero=off'];

/** Opens PGlite: on a data directory (or `memory://`), from a dump's image, or in memory; with `SETTINGS`. */
export function openPglite(o: { dataDir?: string; image?: Blob | File }): PGlite {
  return new PGlite({
    ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
    ...(o.image !== undefined ? { loadDataDir: o.image } : {}),
    startParams: [...PGlite.defaultStartParams, ...SETTINGS],
  });
}

import { PGlite } from '@electric-sql/pglite';
import { forgetSeed, isNewCluster, keepSeed, readSeed, seedFile } from './pglite-seed.js';

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

/**
 * PGlite open and ready: on a data directory (or `memory://`), from a dump's image, or in memory; with `SETTINGS`. A
 * new cluster (in memory without an image, or on a data directory that has none yet) starts from the kept seed, and
 * the first one made without it is kept as the seed (`pglite-seed.ts`, docs/event-store.md#a-new-embedded-database).
 * `seed` names another file to keep it in (undefined: none kept).
 */
export async function openPglite(o: { dataDir?: string; image?: Blob | File; seed?: string | undefined }): Promise<PGlite> {
  const file = 'seed' in o ? o.seed : seedFile();
  const onDisk = o.dataDir !== undefined && !o.dataDir.startsWith('memory://');
  const open = async (image: Blob | File | undefined) => {
    const client = new PGlite({
      ...(onDisk ? { dataDir: o.dataDir } : {}),
      ...(image !== undefined ? { loadDataDir: image } : {}),
      startParams: [...PGlite.defaultStartParams, ...SETTINGS],
    });
    await client.waitReady.catch(async (err: unknown) => {
      await client.close().catch(() => undefined);
      throw err;
    });
    return client;
  };
  const made = async () => {
    const client = await open(undefined);
    await keepSeed(client, file);
    return client;
  };
  if (o.image !== undefined || !isNewCluster(o.dataDir)) return open(o.image);
  const seed = readSeed(file);
  if (seed === undefined) return made();
  try {
    return await open(seed);
  } catch (err) {
    // a seed PGlite refuses is let go of; a data directory it was half written into is not touched
    forgetSeed(file);
    if (!isNewCluster(o.dataDir)) throw err;
    return made();
  }
}

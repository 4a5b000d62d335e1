import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { threadId } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';

/**
 * A new embedded database starts from a kept copy of PGlite's freshly initialised cluster, the seed
 * (docs/event-store.md#a-new-embedded-database). PGlite makes a new cluster by running PostgreSQL's `initdb`, which
 * took about 5 s of CPU on the development machine, on every start in memory and on the first start on a data
 * directory; opening from the seed took about 1.2 s. The first new database made on an installation is dumped
 * (gzip, about 4 MB) into the seed, which is kept under `node_modules/.cache/agent-voice-platform/`, beside the
 * PGlite package that made it: a new version of PGlite, or a fresh `npm ci`, makes a new one.
 *
 * The seed is only PGlite's own cluster, made before any statement of the platform's ran: the migrations still run
 * on every new database, as on a server.
 */

/** The file the seed of this version of PGlite is kept in (undefined: no node_modules to keep it in). */
export function seedFile(): string | undefined {
  const pglite = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  const at = pglite.lastIndexOf(`${sep}node_modules${sep}`);
  if (at < 0) return undefined;
  const pkg = JSON.parse(readFileSync(join(dirname(pglite), '..', 'package.json'), 'utf8')) as { version: string };
  return join(pglite.slice(0, at), 'node_modules', '.cache', 'agent-voice-platform', `pglite-${pkg.version}-cluster.tar.gz`);
}

/** Whether a new cluster is made by opening on this data directory (none there yet); memory: always. */
export function isNewCluster(dataDir: string | undefined): boolean {
  return dataDir === undefined || dataDir.startsWith('memory://') || !existsSync(join(dataDir, 'PG_VERSION'));
}

/**
 * The kept seed, if there is one whose content matches the SHA-256 digest it starts with; one that does not is
 * removed (the next new database makes it anew).
 */
export function readSeed(file = seedFile()): Blob | undefined {
  if (!file || !existsSync(file)) return undefined;
  try {
    const kept = readFileSync(file);
    const bytes = kept.subarray(DIGEST_LENGTH);
    if (kept.subarray(0, DIGEST_LENGTH).toString('latin1') === digest(bytes)) return new Blob([bytes], { type: 'application/x-gzip' });
  } catch {
    // unreadable: made anew
  }
  forgetSeed(file);
  return undefined;
}

/** Removes the kept seed (the next new database makes it anew). */
export function forgetSeed(file = seedFile()): void {
  if (file) rmSync(file, { force: true });
}

const DIGEST_LENGTH = 64;
/** the files this thread has begun to write, for a name of its own */
let parts = 0;
const digest = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * Keeps the cluster `client` has just made as the seed, unless one is kept already: its digest and its bytes in one
 * file, written under a name of its own and renamed into place, so that processes making new databases at once
 * never read half of one. A seed that cannot be kept (no write permission) is not an error: the next new database
 * runs `initdb` again.
 */
export async function keepSeed(client: PGlite, file = seedFile()): Promise<void> {
  if (!file || existsSync(file)) return;
  const part = `${file}.${process.pid}.${threadId}.${++parts}`;
  try {
    const bytes = new Uint8Array(await (await client.dumpDataDir('gzip')).arrayBuffer());
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(part, Buffer.concat([Buffer.from(digest(bytes), 'latin1'), bytes]));
    renameSync(part, file);
  } catch {
    rmSync(part, { force: true });
  }
}

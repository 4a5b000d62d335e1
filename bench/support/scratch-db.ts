import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';

/**
 * Runs `fn` against a database of its own on DATABASE_URL's server (not a schema: the Kysely migrator would
 * find another schema's kysely_migration tables), created for the bench and dropped afterwards. Needs CREATEDB.
 */
export async function withScratchDatabase<T>(url: string, fn: (scoped: string) => Promise<T>): Promise<T> {
  const name = `bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`).catch((err: unknown) => {
      throw new Error(`the bench needs to create a scratch database on DATABASE_URL's server: ${String(err)}`);
    });
    try {
      const scoped = new URL(url);
      scoped.pathname = `/${name}`;
      return await fn(scoped.toString());
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
    }
  } finally {
    await admin.end();
  }
}

/** What a bench prints of its targets: PGlite, and DATABASE_URL's server when it is set. */
export const targetsLine = (url: string | undefined): string =>
  `targets: pglite${url ? ' + DATABASE_URL server' : ' (set DATABASE_URL to add a server)'}`;

/**
 * Runs `fn` with PGlite's data in a new directory under `parent` (a data directory on disk, as the platform's default
 * start keeps it in `./data`), removed afterwards.
 */
async function withScratchDataDir<T>(parent: string, fn: (dir: string) => Promise<T>): Promise<T> {
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(join(parent, 'bench-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Runs a bench on each of its targets in turn: PGlite in memory (or, with BENCH_DATA_DIR, in a new data directory
 * under that directory, as the platform's default start keeps it on disk), then, with DATABASE_URL, a scratch
 * database on that server. `run` gets the target's name and the environment that points the platform at it.
 */
export async function onEachTarget<T>(
  url: string | undefined,
  run: (name: string, env: Record<string, string>) => Promise<T[]>,
): Promise<T[]> {
  const onDisk = process.env.BENCH_DATA_DIR;
  const results = onDisk
    ? await withScratchDataDir(onDisk, (dir) => run('pglite (data dir)', { DATA_DIR: dir }))
    : await run('pglite (memory)', { DATA_DIR: 'memory://' });
  if (url) results.push(...(await withScratchDatabase(url, (scoped) => run('postgres (server)', { DATABASE_URL: scoped }))));
  return results;
}

/**
 * Runs a bench on each target with one receiver, which it closes at the end, then prints the table of results and the
 * notes the runs left.
 */
export async function runOnTargets<R extends { close(): Promise<void> }, T>(
  url: string | undefined,
  rx: R,
  run: (name: string, env: Record<string, string>, rx: R, notes: string[]) => Promise<T[]>,
  print: (results: T[]) => void,
): Promise<void> {
  const notes: string[] = [];
  let results: T[];
  try {
    results = await onEachTarget(url, (name, env) => run(name, env, rx, notes));
  } finally {
    await rx.close();
  }
  console.log('');
  print(results);
  console.log('');
  for (const note of notes) console.log(note);
}

import { randomUUID } from 'node:crypto';
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

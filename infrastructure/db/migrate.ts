import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import type { Capability } from '../capabilities/capability.js';
import { capabilities } from '../capabilities/index.js';

/**
 * Versioned migrations, gathered from the capabilities and applied in name order at start; a migration is never
 * edited once released. Each capability owns a number range (001-009 platform and accounts, 010-019 webhooks,
 * 020-029 numbers, …), and a database that already has a later range may still receive an earlier range's new
 * migration (`allowUnorderedMigrations`): the ranges touch disjoint tables.
 */
export function migrationsOf(modules: readonly Capability[]): Record<string, Migration> {
  const all: Record<string, Migration> = {};
  for (const m of modules) {
    for (const [name, migration] of Object.entries(m.migrations ?? {})) {
      if (all[name]) throw new Error(`two capabilities define migration ${name}`);
      all[name] = migration;
    }
  }
  return all;
}

class StaticProvider implements MigrationProvider {
  constructor(private readonly migrations: Record<string, Migration>) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return this.migrations;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: migrations create the schema, so they run on a database of any shape
export async function migrateToLatest(db: Kysely<any>, modules: readonly Capability[] = capabilities): Promise<void> {
  const { error, results } = await new Migrator({
    db,
    provider: new StaticProvider(migrationsOf(modules)),
    allowUnorderedMigrations: true,
  }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`migration ${failed ?? '?'} failed: ${String(error)}`);
  }
}

import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as m001 from './migrations/001-event-store.js';
import * as m002 from './migrations/002-read-models.js';
import * as m003 from './migrations/003-account-ledger.js';
import * as m004 from './migrations/004-api-key-usage.js';
import * as m005 from './migrations/005-usage-daily.js';
import * as m006 from './migrations/006-signups.js';
import * as m020 from './migrations/020-phone-numbers.js';
import * as m021 from './migrations/021-sandbox-telecom.js';
import * as m022 from './migrations/022-reactors.js';
import * as m023 from './migrations/023-number-attach-order.js';
import * as m024 from './migrations/024-one-checkpoint-table.js';
import * as m010 from './migrations/010-webhooks.js';

/**
 * Versioned migrations, applied in name order at start; a migration is never edited once released. Each
 * capability owns a number range (001-009 platform and accounts, 010-019 webhooks, 020-029 numbers), and a
 * database that already has a later range may still receive an earlier range's new migration
 * (`allowUnorderedMigrations`): the ranges touch disjoint tables.
 */
const migrations: Record<string, Migration> = {
  '001-event-store': m001,
  '002-read-models': m002,
  '003-account-ledger': m003,
  '004-api-key-usage': m004,
  '005-usage-daily': m005,
  '006-signups': m006,
  '020-phone-numbers': m020,
  '021-sandbox-telecom': m021,
  '022-reactors': m022,
  '023-number-attach-order': m023,
  '024-one-checkpoint-table': m024,
  '010-webhooks': m010,
};

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  const { error, results } = await new Migrator({ db, provider: new StaticProvider(), allowUnorderedMigrations: true }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`migration ${failed ?? '?'} failed: ${String(error)}`);
  }
}

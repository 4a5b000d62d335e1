import type { Kysely } from 'kysely';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { ReadDb } from '../../../projections/shared/read-db.js';

/**
 * What each simulated upstream of the sandbox kit stands on (docs/sandbox.md): its state in tables of its own beside
 * the read models (the sandbox capability's migrations), so it survives restarts and is shared by every process on the
 * database, and the platform's Clock, which the sandbox clock moves: what it will do later is a row due on it.
 */
export abstract class SandboxUpstream<Tables extends Record<string, object>> {
  protected readonly db: Kysely<ReadDb & Tables>;

  protected constructor(
    db: Kysely<ReadDb>,
    protected readonly clock: ClockPort,
  ) {
    this.db = db.withTables<Tables>();
  }

  protected now(): Date {
    return this.clock.now();
  }
}

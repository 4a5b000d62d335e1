import { inject, injectable } from 'inversify';
import type { Kysely } from 'kysely';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { IdsPort } from '../../../application/ports/ids.port.js';
import { DomainError } from '../../../domain/shared/errors.js';
import type { ReadDb } from '../../../projections/shared/read-db.js';
import { token } from '../../capabilities/token.js';
import { PLATFORM } from '../../platform/tokens.js';
import type { SandboxDb, SandboxFaultsTable } from '../carrier/db.js';

/** Upstream operations of the sandbox providers that can be made to fail or to be slow. */
export const FAULT_OPERATIONS = [
  'carrier.search',
  'carrier.purchase',
  'carrier.configureMessaging',
  'carrier.configureVoice',
  'carrier.release',
  'carrier.lookup',
  'sip.createTrunk',
  'sip.updateTrunk',
  'sip.deleteTrunk',
] as const;
export type FaultOperation = (typeof FAULT_OPERATIONS)[number];
export const FAULT_ERRORS = ['SMS_PROVIDER_ERROR', 'TELEPHONY_PROVIDER_ERROR'] as const;
export type FaultError = (typeof FAULT_ERRORS)[number];

/** The error an operation's fault raises unless told otherwise: messaging-side calls are the SMS provider's. */
const DEFAULT_ERROR: Record<FaultOperation, FaultError> = {
  'carrier.search': 'SMS_PROVIDER_ERROR',
  'carrier.purchase': 'SMS_PROVIDER_ERROR',
  'carrier.configureMessaging': 'SMS_PROVIDER_ERROR',
  'carrier.configureVoice': 'TELEPHONY_PROVIDER_ERROR',
  'carrier.release': 'SMS_PROVIDER_ERROR',
  'carrier.lookup': 'SMS_PROVIDER_ERROR',
  'sip.createTrunk': 'TELEPHONY_PROVIDER_ERROR',
  'sip.updateTrunk': 'TELEPHONY_PROVIDER_ERROR',
  'sip.deleteTrunk': 'TELEPHONY_PROVIDER_ERROR',
};

export type FaultSpec = Readonly<{
  operation: FaultOperation;
  /** the error to raise; omitted: the operation's provider error, unless the fault only delays */
  error?: FaultError | undefined;
  /** wait this long (wall-clock) before answering */
  delayMs?: number | undefined;
  /** the operation takes effect, then the answer is delayed or fails ("the operation may already have executed") */
  afterEffect?: boolean | undefined;
  /** how many calls it affects (default 1) */
  times?: number | undefined;
}>;
export type Fault = Readonly<{
  id: string;
  operation: string;
  error: string | null;
  delayMs: number;
  afterEffect: boolean;
  remaining: number;
  createdAt: string;
}>;

const toFault = (r: SandboxFaultsTable): Fault => ({
  id: r.fault_id,
  operation: r.operation,
  error: r.error_code,
  delayMs: r.delay_ms,
  afterEffect: r.after_effect,
  remaining: r.remaining,
  createdAt: new Date(r.created_at).toISOString(),
});

/**
 * Injected upstream failures for the sandbox providers, stored in the database so that a fault added through
 * the sandbox API of one process is met by the provider calls of another (API and worker processes), and so
 * that a consumed fault stays consumed across a restart. Each call of an operation consumes the oldest
 * pending fault for it.
 */
@injectable()
export class SandboxFaults {
  private readonly db: Kysely<ReadDb & SandboxDb>;

  constructor(
    @inject(PLATFORM.ReadDb) db: Kysely<ReadDb>,
    @inject(PLATFORM.Ids) private readonly ids: IdsPort,
    @inject(PLATFORM.Clock) private readonly clock: ClockPort,
  ) {
    this.db = db.withTables<SandboxDb>();
  }

  async add(spec: FaultSpec): Promise<Fault> {
    const delayMs = spec.delayMs ?? 0;
    const error = spec.error ?? (delayMs > 0 ? null : DEFAULT_ERROR[spec.operation]);
    const row: SandboxFaultsTable = {
      fault_id: this.ids.id('flt'),
      operation: spec.operation,
      error_code: error,
      delay_ms: delayMs,
      after_effect: spec.afterEffect ?? false,
      remaining: spec.times ?? 1,
      created_at: this.clock.now().toISOString(),
    };
    await this.db.insertInto('sandbox_faults').values(row).execute();
    return toFault(row);
  }

  async list(): Promise<Fault[]> {
    const rows = await this.db
      .selectFrom('sandbox_faults')
      .selectAll()
      .where('remaining', '>', 0)
      .orderBy('created_at')
      .orderBy('fault_id')
      .execute();
    return rows.map(toFault);
  }

  async clear(): Promise<number> {
    const r = await this.db.deleteFrom('sandbox_faults').executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  private async consume(operation: FaultOperation): Promise<SandboxFaultsTable | null> {
    const next = await this.db
      .selectFrom('sandbox_faults')
      .select('fault_id')
      .where('operation', '=', operation)
      .where('remaining', '>', 0)
      .orderBy('created_at')
      .orderBy('fault_id')
      .limit(1)
      .executeTakeFirst();
    if (!next) return null;
    const row = await this.db
      .updateTable('sandbox_faults')
      .set((eb) => ({ remaining: eb('remaining', '-', 1) }))
      .where('fault_id', '=', next.fault_id)
      .where('remaining', '>', 0)
      .returningAll()
      .executeTakeFirst();
    return row ?? null;
  }

  /** Runs one upstream operation with whatever fault is pending for it. */
  async around<T>(operation: FaultOperation, effect: () => Promise<T>): Promise<T> {
    const f = await this.consume(operation);
    if (!f) return effect();
    const fail = () => {
      if (f.error_code)
        throw new DomainError(
          f.error_code as FaultError,
          `${f.error_code === 'SMS_PROVIDER_ERROR' ? 'SMS provider' : 'Telephony provider'} error: ${operation} failed upstream (sandbox fault ${f.fault_id})${f.after_effect ? '; the operation may have taken effect' : ''}`,
        );
    };
    if (!f.after_effect) {
      await sleep(f.delay_ms);
      fail();
      return effect();
    }
    const result = await effect();
    await sleep(f.delay_ms);
    fail();
    return result;
  }
}

const sleep = (ms: number) => (ms > 0 ? new Promise<void>((r) => setTimeout(r, ms)) : Promise.resolve());

/** The faults' token: the sandbox carrier and the sandbox SIP provider both consult them. */
export const SANDBOX_FAULTS = token<SandboxFaults>('SandboxFaults');

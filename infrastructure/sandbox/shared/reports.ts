import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type QueryExecutorProvider, type RawBuilder, sql } from 'kysely';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { LoggerPort } from '../../../application/ports/logger.port.js';
import { PLANNED_EACH_RUN } from '../../db/prepared.js';
import { IntervalWorker } from '../../workers.js';

/**
 * What a sandbox upstream will report later (an SMS receipt, a chat platform's status or template review, a rich
 * provider's status) is a row due at a time on the Clock, in a table of its own with these columns besides its own:
 * `due_at`, `claimed_by`, `claimed_until`, `attempts`, `reported_at` (and `last_error` where kept).
 */
export type ReportTable<Row> = Readonly<{
  table: string;
  /** the columns that name one report */
  key: readonly (keyof Row & string)[];
  /** what a report is about (a message): a subject's reports are made one after another, in due order */
  subject: keyof Row & string;
  /** whether the table keeps the error of the last failed attempt (`last_error`) */
  keepsLastError: boolean;
}>;

type Timed = { due_at: Date | string; attempts: number };

/** The columns every report table has besides its own (`last_error` only where `keepsLastError`). */
export interface ReportColumns {
  due_at: Date | string;
  claimed_by: string | null;
  claimed_until: Date | string | null;
  attempts: number;
  /** when it was reported (null: still to report) */
  reported_at: Date | string | null;
}

/** A report leased to one worker: what it says, and what names its row. */
export type Claimed<C> = Readonly<{ report: C; key: readonly unknown[]; attempts: number }>;

export type ClaimOptions = Readonly<{ now: Date; limit: number; workerId: string; leaseMs: number }>;

/** How many due reports a claim looks at for each one it may take (docs/sandbox.md#sms-receipts). */
export const CANDIDATES_PER_CLAIMED = 4;

const compare = (a: unknown, b: unknown): number =>
  typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b));

/**
 * The due reports of one table (docs/sandbox.md#sms-receipts). A claim locks the due rows no live lease holds
 * (`FOR UPDATE SKIP LOCKED`: a row another worker is claiming is skipped, not waited for) and leases them to one
 * worker; the report comes after the claim's commit. The rows to take are chosen once, in a materialized CTE: as a
 * subquery joined to the UPDATE, PostgreSQL may scan it again for each row, and every scan after the first skips the
 * rows just leased and takes the next ones, past the limit and out of due order. A worker that dies between the
 * claim and the report leaves the lease to expire, and the report is made again (at least once). Only a subject's
 * earliest unmade report can be claimed, so two workers never report a message's `delivered` before its `sent` (a
 * report that failed falls due again later, and the ones due before its retry go first).
 *
 * The earliest unmade reports are looked for among the first due ones only (`CANDIDATES_PER_CLAIMED` times the
 * limit, in due order), so a claim costs the same however many reports wait: with the order and the look-up of
 * earlier reports over every due report, a planner without statistics sorted and looked up all of them first (15 ms
 * with 6,000 waiting, 4 ms this way). A report kept out by an earlier one another worker holds is taken at a later
 * claim, as before. The claim is planned at each run (`PLANNED_EACH_RUN`): its table grows fast, and a plan kept
 * from when it was nearly empty made a claim 10-20 times slower.
 */
export class ReportTimeline<Row extends Timed, C> {
  constructor(
    private readonly db: QueryExecutorProvider,
    private readonly t: ReportTable<Row>,
    private readonly read: (row: Row) => C,
  ) {}

  private refs(alias: string): RawBuilder<unknown> {
    return sql.join(this.t.key.map((k) => sql.ref(`${alias}.${k}`)));
  }

  private keyIs(key: readonly unknown[]): RawBuilder<unknown> {
    return sql.join(
      this.t.key.map((k, i) => sql`${sql.ref(k)} = ${key[i]}`),
      sql` and `,
    );
  }

  /** the same report in two aliases: each key column equal */
  private keysMatch(a: string, b: string): RawBuilder<unknown> {
    return sql.join(
      this.t.key.map((k) => sql`${sql.ref(`${a}.${k}`)} = ${sql.ref(`${b}.${k}`)}`),
      sql` and `,
    );
  }

  /**
   * Whether any report is due now and no live lease holds it (docs/sandbox.md#sms-receipts): a look at the first
   * entry of the due index, asked before a claim. A claim is planned at each run, which costs the embedded database
   * more than answering it; most passes find nothing due, and then no claim is made.
   */
  async anyDue(now: Date): Promise<boolean> {
    const at = now.toISOString();
    const r = await sql<{ due: number }>`select 1 as due from ${sql.table(this.t.table)} c
       where c.reported_at is null
         and c.due_at <= ${at}::timestamptz
         and (c.claimed_until is null or c.claimed_until <= ${at}::timestamptz)
       order by c.due_at
       limit 1`.execute(this.db);
    return r.rows.length > 0;
  }

  async claim(o: ClaimOptions): Promise<Claimed<C>[]> {
    if (o.limit <= 0) return [];
    const now = o.now.toISOString();
    const until = new Date(o.now.getTime() + o.leaseMs).toISOString();
    const table = sql.table(this.t.table);
    const subject = (alias: string) => sql.ref(`${alias}.${this.t.subject}`);
    const r = await sql<Row>`${sql.raw(PLANNED_EACH_RUN)}
      with due as materialized (
        select ${this.refs('s')} from (
          select ${this.refs('c')}, ${subject('c')}, c.due_at from ${table} c
           where c.reported_at is null
             and c.due_at <= ${now}::timestamptz
             and (c.claimed_until is null or c.claimed_until <= ${now}::timestamptz)
           order by c.due_at, ${this.refs('c')}
           limit ${o.limit * CANDIDATES_PER_CLAIMED}) s
          join ${table} l on ${this.keysMatch('l', 's')}
         where not exists (
             select 1 from ${table} e
              where ${subject('e')} = ${subject('s')} and e.reported_at is null
                and (e.due_at, ${this.refs('e')}) < (s.due_at, ${this.refs('s')}))
         order by s.due_at, ${this.refs('s')}
         limit ${o.limit}
         for update of l skip locked
      )
      update ${table} r
         set claimed_by = ${o.workerId}, claimed_until = ${until}::timestamptz
        from due
       where ${this.keysMatch('r', 'due')}
         and r.reported_at is null
         and (r.claimed_until is null or r.claimed_until <= ${now}::timestamptz)
      returning r.*`.execute(this.db);
    const keyOf = (row: Row) => this.t.key.map((k) => row[k]);
    return r.rows
      .sort((a, b) => {
        const byDue = +new Date(a.due_at) - +new Date(b.due_at);
        if (byDue !== 0) return byDue;
        const ka = keyOf(a);
        const kb = keyOf(b);
        for (let i = 0; i < ka.length; i++) {
          const c = compare(ka[i], kb[i]);
          if (c !== 0) return c;
        }
        return 0;
      })
      .map((row) => ({ report: this.read(row), key: keyOf(row), attempts: row.attempts }));
  }

  /** The platform side took the report: it is never made again (unless this worker's lease was lost). */
  async reported(c: Claimed<C>, workerId: string, now: Date): Promise<void> {
    await this.reportedAll([c], workerId, now);
  }

  /** The platform side took these reports, in one statement (docs/sandbox.md#sms-receipts). */
  async reportedAll(cs: readonly Claimed<C>[], workerId: string, now: Date): Promise<void> {
    if (cs.length === 0) return;
    const keys = sql.join(cs.map((c) => sql`(${sql.join(c.key.map((v) => sql`${v}`))})`));
    await sql`update ${sql.table(this.t.table)} set reported_at = ${now.toISOString()}::timestamptz, claimed_until = null
      where (${sql.join(this.t.key.map((k) => sql.ref(k)))}) in (${keys}) and claimed_by = ${workerId}`.execute(this.db);
  }

  /** The report was not taken: make it again at `retryAt`. */
  async failed(c: Claimed<C>, workerId: string, retryAt: Date, error: string): Promise<void> {
    const lastError = this.t.keepsLastError ? sql`, last_error = ${error.slice(0, 500)}` : sql``;
    await sql`update ${sql.table(this.t.table)}
         set due_at = ${retryAt.toISOString()}::timestamptz, claimed_by = null, claimed_until = null, attempts = ${c.attempts + 1}${lastError}
       where ${this.keyIs(c.key)} and claimed_by = ${workerId} and reported_at is null`.execute(this.db);
  }
}

/** What the report worker does with a timeline: look, claim, and mark what became of each report. */
export type ReportClaims<Row extends Timed, C> = Pick<ReportTimeline<Row, C>, 'anyDue' | 'claim' | 'reportedAll' | 'failed'>;

export type ReportWorkerOptions = Readonly<{
  /** how often to look for due reports */
  pollIntervalMs: number;
  /** how long a claim keeps other workers off a report (Clock time) */
  leaseMs: number;
  /** reports claimed at once */
  batchSize?: number;
  workerId?: string;
}>;

/** Retry of a report that was not taken: 1 s, 2 s, 4 s, … up to a minute (Clock time). */
export const reportRetryDelayMs = (attempts: number): number => Math.min(1000 * 2 ** attempts, 60_000);

/**
 * Makes a sandbox upstream's due reports to the platform side, a subject's in the order they fall due; the reports
 * of one claim are made at once, as a real upstream's callbacks arrive side by side, since a claim holds at most one
 * report of a subject (docs/sandbox.md#sms-receipts). A report the platform side did not take (`make` threw) is made
 * again later. The platform side is looked up at each report (it is
 * whatever its capability bound), so until something is bound reports fail and are retried. Any number may run.
 */
export class ReportWorker<Row extends Timed, C> extends IntervalWorker<number> {
  readonly workerId: string;

  constructor(
    readonly name: string,
    private readonly timeline: ReportClaims<Row, C>,
    private readonly make: (report: C) => Promise<void>,
    private readonly clock: ClockPort,
    log: LoggerPort,
    private readonly o: ReportWorkerOptions,
  ) {
    super(log, o.pollIntervalMs);
    this.workerId = o.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  }

  /** Claims and makes every report due now; returns how many were taken. */
  async runOnce(): Promise<number> {
    let n = 0;
    for (;;) {
      const now = this.clock.now();
      // nothing due (most passes): no claim, whose planning costs more than this look
      if (!(await this.timeline.anyDue(now))) return n;
      const claimed = await this.timeline.claim({
        now,
        limit: this.o.batchSize ?? 50,
        workerId: this.workerId,
        leaseMs: this.o.leaseMs,
      });
      if (claimed.length === 0) return n;
      // made at once (none of them another's subject), and the reports taken marked together once all are made: one
      // statement per batch, not per report; a worker that dies before that makes them again (at least once)
      const made = await Promise.all(claimed.map((c) => this.report(c)));
      const taken = claimed.filter((_, i) => made[i]);
      await this.timeline.reportedAll(taken, this.workerId, this.clock.now());
      n += taken.length;
    }
  }

  private async report(c: Claimed<C>): Promise<boolean> {
    try {
      await this.make(c.report);
      return true;
    } catch (err) {
      this.log.warn({ err, report: c.key }, `${this.name}: a report was not taken; made again later`);
      const retryAt = new Date(this.clock.now().getTime() + reportRetryDelayMs(c.attempts));
      await this.timeline.failed(c, this.workerId, retryAt, err instanceof Error ? err.message : String(err));
      return false;
    }
  }
}

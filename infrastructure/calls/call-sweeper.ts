import type { CallCommands } from '../../application/calls/call-commands.js';
import type { CallHost, CallLeasesPort } from '../../application/calls/call-host.js';
import type { ClockPort } from '../../application/ports/clock.port.js';
import type { IdsPort } from '../../application/ports/ids.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { DomainError } from '../../domain/shared/errors.js';
import { IntervalWorker } from '../workers.js';
import type { KyselyWebCallTokens } from './kysely-call-live.js';

/**
 * Ends calls nobody holds any more (docs/calls.md#how-a-call-ends): a call whose process stopped renewing its lease
 * (`host_lost`), and a web call nobody joined before its token expired (`canceled`). A call the store holds with no
 * lease at all (its request's process stopped between recording and dialling) is recovered from its facts: dialled
 * when it never was, ended otherwise. The process on the line enforces the call's own limits (duration, silence);
 * this is the backstop that makes every call reach a final state, whatever happened to the request that placed it.
 */
export class CallSweeper extends IntervalWorker<number> {
  readonly name = 'call-sweeper';

  constructor(
    private readonly deps: Readonly<{
      host: CallHost;
      commands: CallCommands;
      leases: CallLeasesPort;
      /** how long a placed call may go without a lease before it is recovered (the lease's length) */
      unheldAfterMs: number;
      webTokens: KyselyWebCallTokens;
      clock: ClockPort;
      ids: IdsPort;
    }>,
    log: LoggerPort,
    intervalMs: number,
  ) {
    super(log, intervalMs);
  }

  async runOnce(): Promise<number> {
    const now = this.deps.clock.now();
    const expired = await this.deps.leases.expired(now, 100);
    let ended = 0;
    for (const lease of expired) {
      // a call this process holds is renewed by its own heartbeat; a lapse here is a slow heartbeat, not a lost host
      if (this.deps.host.holds(lease.callId)) continue;
      const ctx = { accountId: lease.accountId, requestId: null, correlationId: this.deps.ids.uuid(), actor: `system:${this.name}` };
      const web = lease.hostId === 'web-pending';
      try {
        await this.deps.host.end(
          ctx,
          lease.callId,
          web ? 'canceled' : 'host_lost',
          web ? 'the web call was not joined before its access token expired' : `its process (${lease.hostId}) stopped renewing the call`,
        );
      } catch (err) {
        // one lease that cannot be ended must not hold up the others behind it (they come oldest first)
        if (!(err instanceof DomainError && err.code === 'CALL_NOT_FOUND')) {
          this.log.warn({ err, callId: lease.callId }, 'call sweeper could not end a call; it tries again on the next pass');
          continue;
        }
        // no such call of that account: there is nothing to end, only the lease to forget
        this.log.warn({ callId: lease.callId, accountId: lease.accountId }, 'call sweeper dropped the lease of a call that does not exist');
        await this.deps.leases.drop(lease.callId);
        continue;
      }
      await this.deps.leases.drop(lease.callId);
      ended++;
    }
    ended += await this.recoverUnheld(now);
    await this.deps.webTokens.purge(now);
    if (ended) this.log.info({ ended }, 'call sweeper ended calls nobody held');
    return ended;
  }

  /** Calls stored with no lease (never dialled, or never leased): each is dialled or ended from its own facts. */
  private async recoverUnheld(now: Date): Promise<number> {
    const unheld = await this.deps.leases.unheld(new Date(now.getTime() - this.deps.unheldAfterMs), 100);
    let n = 0;
    for (const c of unheld) {
      if (this.deps.host.holds(c.callId)) continue;
      try {
        const done = await this.deps.commands.recover(c.callId, c.accountId, `system:${this.name}`);
        if (done !== 'none' && done !== 'held') n++;
        if (done !== 'none') this.log.warn({ callId: c.callId, done }, 'call sweeper recovered a call no process held');
      } catch (err) {
        this.log.warn({ err, callId: c.callId }, 'call sweeper could not recover a call; it tries again on the next pass');
      }
    }
    return n;
  }
}

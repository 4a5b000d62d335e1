import type { CallCommands } from '../../application/calls/call-commands.js';
import type { CallHost, CallLeasesPort } from '../../application/calls/call-host.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { IntervalWorker } from '../workers.js';

/**
 * Dials the outbound calls that were placed by a process holding no lines (docs/calls.md#how-a-call-ends): with the
 * SIP engine, a `ROLE=api` process records `POST /v1/calls` and answers; the dialler of a process that holds the
 * lines (ROLE `voice` or `all`) finds the placed call in the read model and dials it from its stored facts, claiming
 * its lease first, so that of several voice processes one dials it. It looks every `intervalMs`.
 */
export class CallDialler extends IntervalWorker<number> {
  readonly name = 'call-dialler';

  constructor(
    private readonly deps: Readonly<{ host: CallHost; commands: CallCommands; leases: CallLeasesPort }>,
    log: LoggerPort,
    intervalMs: number,
  ) {
    super(log, intervalMs);
  }

  async runOnce(): Promise<number> {
    let dialled = 0;
    for (const c of await this.deps.leases.undialled(20)) {
      if (this.deps.host.holds(c.callId)) continue;
      try {
        const done = await this.deps.commands.recover(c.callId, c.accountId, `system:${this.name}`);
        if (done === 'dialled') dialled++;
      } catch (err) {
        // a refusal of the provider is on the call's record already (telephony_error); anything else is tried again
        this.log.warn({ err, callId: c.callId }, 'call dialler: dialling failed');
      }
    }
    return dialled;
  }
}

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { LoggerPort } from '../../../application/ports/logger.port.js';
import type { RichEventsPort } from '../../../application/rich/rich-provider.port.js';
import { IntervalWorker } from '../../workers.js';
import type { SandboxRichProvider } from './sandbox-rich-provider.js';
import { reportRetryDelayMs } from './sandbox-sms-receipts.js';

/**
 * Makes the sandbox rich provider's due statuses (delivered, read) to the rich channel (`RichEventsPort`), in the
 * order they fall due on the Clock; a status the platform could not take is made again later. Any number of these
 * may run: a claim leases its rows to one worker.
 */
export class SandboxRichReportWorker extends IntervalWorker<number> {
  readonly name = 'sandbox-rich-reports';
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

  constructor(
    private readonly provider: SandboxRichProvider,
    private readonly events: () => RichEventsPort,
    private readonly clock: ClockPort,
    log: LoggerPort,
    private readonly o: { pollIntervalMs: number; leaseMs: number },
  ) {
    super(log, o.pollIntervalMs);
  }

  async runOnce(): Promise<number> {
    let n = 0;
    for (;;) {
      const claimed = await this.provider.claim({ now: this.clock.now(), limit: 50, workerId: this.workerId, leaseMs: this.o.leaseMs });
      if (claimed.length === 0) return n;
      for (const c of claimed) {
        try {
          const taken = await this.events().status({
            receiptId: c.reportId,
            messageId: c.messageId,
            providerMessageId: c.providerMessageId,
            status: c.status as 'delivered' | 'read',
            at: c.dueAt,
            reason: null,
          });
          if (!taken) throw new Error(`no message ${c.messageId} here`);
          await this.provider.reported(c.reportId, this.workerId, this.clock.now());
          n++;
        } catch (err) {
          this.log.warn({ err, reportId: c.reportId }, 'sandbox rich provider status not taken; made again later');
          await this.provider.retryLater(c, this.workerId, new Date(this.clock.now().getTime() + reportRetryDelayMs(c.attempts)));
        }
      }
    }
  }
}

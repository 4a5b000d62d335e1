import type { InboundSms, SmsCarrierEventsPort, SmsReceipt } from '../../application/messaging/sms-carrier.port.js';
import type { ReportWorker } from '../../infrastructure/sandbox/shared/reports.js';
import type { SandboxSmsReceiptsTable } from '../../infrastructure/sandbox/sms/db.js';
import { SANDBOX } from '../../infrastructure/sandbox/tokens.js';
import type { TestApp } from './http.js';

export type SmsReceiptWorker = ReportWorker<SandboxSmsReceiptsTable, SmsReceipt>;

/** A messaging side that records what the carrier reports; `known` numbers take inbound texts, others drop them. */
export class RecordingCarrierEvents implements SmsCarrierEventsPort {
  readonly receipts: SmsReceipt[] = [];
  readonly inbounds: InboundSms[] = [];
  readonly known = new Set<string>();
  /** the next n receipts fail, as a messaging side that is down would */
  failNext = 0;

  async receipt(r: SmsReceipt): Promise<void> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('messaging side unavailable');
    }
    this.receipts.push(r);
  }

  async inbound(m: InboundSms): Promise<{ messageId: string } | null> {
    this.inbounds.push(m);
    return this.known.has(m.to) ? { messageId: `msg_test_${this.inbounds.length}` } : null;
  }

  of(carrierMessageId: string): SmsReceipt[] {
    return this.receipts.filter((r) => r.carrierMessageId === carrierMessageId);
  }
}

/**
 * Puts a recording events port in place of the messaging side (the sandbox carrier looks it up at each use),
 * and stops the background receipt worker so that the test reports receipts itself with `runOnce`.
 */
export async function withRecordingCarrierEvents(app: TestApp): Promise<{ events: RecordingCarrierEvents; worker: SmsReceiptWorker }> {
  const events = new RecordingCarrierEvents();
  app.rt.container.rebind(SANDBOX.SmsEvents).toConstantValue(events);
  const worker = app.rt.workers.get('sandbox-sms-receipts') as SmsReceiptWorker;
  await worker.stop();
  return { events, worker };
}

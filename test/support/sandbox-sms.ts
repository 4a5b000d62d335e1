import type { DeliveryReceipt, InboundMessage, MessagingInboundPort } from '../../application/messaging/delivery/transport.port.js';
import { MESSAGING } from '../../infrastructure/messaging/tokens.js';
import type { ReportWorker } from '../../infrastructure/sandbox/shared/reports.js';
import type { SandboxSmsReceiptsTable } from '../../infrastructure/sandbox/sms/db.js';
import type { TestApp } from './http.js';

export type SmsReceiptWorker = ReportWorker<SandboxSmsReceiptsTable, DeliveryReceipt>;

/** A messaging side that records what the carrier reports; `known` numbers take inbound texts, others drop them. */
export class RecordingCarrierEvents implements MessagingInboundPort {
  readonly receipts: DeliveryReceipt[] = [];
  readonly inbounds: InboundMessage[] = [];
  readonly known = new Set<string>();
  /** the next n receipts fail, as a messaging side that is down would */
  failNext = 0;

  async receipt(r: DeliveryReceipt): Promise<void> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('messaging side unavailable');
    }
    this.receipts.push(r);
  }

  async message(m: InboundMessage): Promise<{ messageId: string } | null> {
    this.inbounds.push(m);
    return this.known.has(m.to) ? { messageId: `msg_test_${this.inbounds.length}` } : null;
  }

  of(carrierMessageId: string): DeliveryReceipt[] {
    return this.receipts.filter((r) => r.providerMessageId === carrierMessageId);
  }
}

/**
 * Puts a recording inbound port in place of the messaging side (the sandbox carrier looks it up at each use),
 * and stops the background receipt worker so that the test reports receipts itself with `runOnce`.
 */
export async function withRecordingCarrierEvents(app: TestApp): Promise<{ events: RecordingCarrierEvents; worker: SmsReceiptWorker }> {
  const events = new RecordingCarrierEvents();
  app.rt.container.rebind(MESSAGING.Inbound).toConstantValue(events);
  const worker = app.rt.workers.get('sandbox-sms-receipts') as SmsReceiptWorker;
  await worker.stop();
  return { events, worker };
}

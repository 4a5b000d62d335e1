import type { InboundSms, SmsCarrierEventsPort, SmsReceipt } from '../../application/messaging/sms-carrier.port.js';
import type { SandboxSmsReceiptWorker } from '../../infrastructure/providers/sandbox/sandbox-sms-receipts.js';
import { SANDBOX_SMS } from '../../infrastructure/sandbox-sms/tokens.js';
import type { TestApp } from './http.js';

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
export async function withRecordingCarrierEvents(
  app: TestApp,
): Promise<{ events: RecordingCarrierEvents; worker: SandboxSmsReceiptWorker }> {
  const events = new RecordingCarrierEvents();
  app.rt.container.rebind(SANDBOX_SMS.Events).toConstantValue(events);
  const worker = app.rt.workers.get('sandbox-sms-receipts') as SandboxSmsReceiptWorker;
  await worker.stop();
  return { events, worker };
}

import type { SmsCarrierEventsPort, SmsCarrierPort } from '../../application/messaging/sms-carrier.port.js';
import { token } from '../capabilities/token.js';
import type { SandboxSmsCarrier } from '../providers/sandbox/sandbox-sms-carrier.js';
import type { SandboxSmsReceipts } from '../providers/sandbox/sandbox-sms-receipts.js';

/** The sandbox SMS carrier's tokens. `Carrier` is the messaging side's carrier port; `Events` is bound by messaging. */
export const SANDBOX_SMS = {
  Carrier: token<SmsCarrierPort>('SmsCarrierPort'),
  /** where the carrier hands receipts and inbound texts: the messaging capability binds it (as MESSAGING.CarrierEvents) */
  Events: token<SmsCarrierEventsPort>('SmsCarrierEvents'),
  SandboxCarrier: token<SandboxSmsCarrier>('SandboxSmsCarrier'),
  Receipts: token<SandboxSmsReceipts>('SandboxSmsReceipts'),
} as const;

import type { SmsCarrierEventsPort } from '../../application/messaging/sms-carrier.port.js';
import type { Capability, Resolve } from '../capabilities/capability.js';
import * as m060 from '../db/migrations/060-sandbox-sms.js';
import { PLATFORM } from '../platform/tokens.js';
import { SandboxSmsCarrier } from '../providers/sandbox/sandbox-sms-carrier.js';
import { SandboxSmsReceipts, SandboxSmsReceiptWorker } from '../providers/sandbox/sandbox-sms-receipts.js';
import { sandboxSmsCommands } from './sandbox-sms.commands.js';
import { sandboxSmsRoutes } from './sandbox-sms.routes.js';
import { SANDBOX_SMS } from './tokens.js';

/** The messaging side, looked up at each use; a clear error while no capability has bound it. */
const eventsOf = (r: Resolve) => (): SmsCarrierEventsPort => {
  try {
    return r(SANDBOX_SMS.Events);
  } catch (err) {
    throw new Error('no messaging side is bound to SmsCarrierEvents: the sandbox carrier cannot hand over receipts and inbound texts', {
      cause: err,
    });
  }
};

/**
 * The sandbox SMS carrier (docs/sandbox.md, "Messaging"): the carrier port of sandbox mode, the worker that
 * reports its receipts, inbound injection and its view of what was sent. The messaging capability binds the
 * events port it reports to (`SANDBOX_SMS.Events`); it is looked up at each use, so the two capabilities bind
 * in any order. In live mode this module binds nothing.
 */
export const sandboxSms = {
  name: 'sandboxSms',
  bind: (b, cfg) => {
    if (cfg.PROVIDER_MODE !== 'sandbox') return;
    b.toClass(SANDBOX_SMS.SandboxCarrier, SandboxSmsCarrier);
    b.alias(SANDBOX_SMS.Carrier, SANDBOX_SMS.SandboxCarrier);
    b.toClass(SANDBOX_SMS.Receipts, SandboxSmsReceipts);
  },
  routes: {
    public: (api, r) => {
      if (r(PLATFORM.Config).PROVIDER_MODE === 'sandbox')
        sandboxSmsRoutes(api, { carrier: r(SANDBOX_SMS.SandboxCarrier), events: eventsOf(r) });
    },
  },
  workers: (r, cfg) =>
    cfg.PROVIDER_MODE === 'sandbox'
      ? [
          new SandboxSmsReceiptWorker(r(SANDBOX_SMS.Receipts), eventsOf(r), r(PLATFORM.Clock), r(PLATFORM.Logger), {
            pollIntervalMs: cfg.SANDBOX_SMS_POLL_INTERVAL_MS,
            leaseMs: cfg.SANDBOX_SMS_RECEIPT_LEASE_MS,
          }),
        ]
      : [],
  migrations: { '060-sandbox-sms': m060 },
  cli: sandboxSmsCommands,
} as const satisfies Capability;

import type { ChatappEventsPort } from '../../application/chatapp/chat-platform.port.js';
import type { MessagingInboundPort } from '../../application/messaging/delivery/transport.port.js';
import { SandboxRegistrationReview } from '../../application/registration/sandbox-review.js';
import { RICH_CHANNEL } from '../../application/rich/rich-commands.js';
import type { RichEventsPort } from '../../application/rich/rich-provider.port.js';
import type { Capability, Resolve } from '../capabilities/capability.js';
import { CHATAPP } from '../chatapp/tokens.js';
import { publicUrl } from '../config/config.js';
import { sandboxParts } from '../config/providers.js';
import * as m021 from '../db/migrations/021-sandbox-telecom.js';
import * as m030 from '../db/migrations/030-sandbox-clock.js';
import * as m060 from '../db/migrations/060-sandbox-sms.js';
import * as m101 from '../db/migrations/101-sandbox-chatapp.js';
import * as m111 from '../db/migrations/111-sandbox-rich.js';
import * as m112 from '../db/migrations/112-sandbox-rich-report-order.js';
import * as m162 from '../db/migrations/162-sandbox-report-subjects.js';
import { httpError } from '../http/errors.js';
import { MESSAGING } from '../messaging/tokens.js';
import { PLATFORM } from '../platform/tokens.js';
import { REGISTRATION } from '../registration/tokens.js';
import { RICH } from '../rich/tokens.js';
import { SIGNUP } from '../signup/tokens.js';
import { SIP } from '../sip/tokens.js';
import { PassWorker } from '../workers.js';
import { sandboxCarrierCommands } from './carrier/carrier.commands.js';
import { sandboxCarrierRoutes } from './carrier/carrier.routes.js';
import { SandboxCarrier } from './carrier/sandbox-carrier.js';
import { SandboxSipTrunks } from './carrier/sip-trunks.js';
import { sandboxSipTrunkRoutes } from './carrier/sip-trunks.routes.js';
import { SandboxChatPlatform } from './chatapp/chat-platform.js';
import { sandboxChatappCommands } from './chatapp/chatapp.commands.js';
import { sandboxChatappRoutes } from './chatapp/chatapp.routes.js';
import { chatappReports } from './chatapp/reports.js';
import { sandboxClockCommands } from './clock/clock.commands.js';
import { SandboxClock } from './clock/clock.js';
import { sandboxClockRoutes } from './clock/clock.routes.js';
import { sandboxFaultCommands } from './faults/faults.commands.js';
import { SandboxFaults } from './faults/faults.js';
import { sandboxFaultRoutes } from './faults/faults.routes.js';
import { sandboxOutboxRoutes } from './mail/outbox.routes.js';
import { sandboxRegistrationRoutes } from './registration/registration.routes.js';
import { richReports } from './rich/reports.js';
import { sandboxRichCommands } from './rich/rich.commands.js';
import { sandboxRichRoutes } from './rich/rich.routes.js';
import { SandboxRichProvider } from './rich/rich-provider.js';
import { sandboxCli } from './shared/cli.js';
import { ReportWorker } from './shared/reports.js';
import { smsReceipts } from './sms/receipts.js';
import { sandboxSmsCommands } from './sms/sms.commands.js';
import { sandboxSmsRoutes } from './sms/sms.routes.js';
import { SandboxSmsCarrier } from './sms/sms-carrier.js';
import { SANDBOX } from './tokens.js';
import { SandboxVoiceEngine } from './voice/engine.js';
import type { SandboxVoiceErrorCode } from './voice/errors.js';
import { sandboxVoiceCommands } from './voice/voice.commands.js';
import { sandboxVoiceRoutes } from './voice/voice.routes.js';

/** The platform sides the kit reports to, looked up at each use (the workers and routes are built before anything resolves them). */
const messagesOf = (r: Resolve) => (): MessagingInboundPort => r(MESSAGING.Inbound);
const chatappEventsOf = (r: Resolve) => (): ChatappEventsPort => r(CHATAPP.EventsPort);
const richEventsOf = (r: Resolve) => (): RichEventsPort => r(RICH.Events);

/**
 * The sandbox kit (docs/sandbox.md): every simulated upstream of sandbox mode in one place. The carrier (numbers,
 * lookups) with its SIP provider, the SMS carrier and its receipts, the voice engine (in this process's memory), the
 * chat platform, the rich-messaging provider, the sandbox clock, injected faults, the e-mail outbox and the 10DLC
 * review; each with its control routes under /sandbox (behind the admin token) and its `cli sandbox …` commands, and
 * the workers that make what the upstreams report later. The capabilities alias their ports to the kit's tokens
 * while the part runs; in live mode the kit binds and mounts nothing (its tables stay).
 */
export const sandbox = {
  name: 'sandbox',
  bind: (b, cfg) => {
    const on = sandboxParts(cfg);
    if (on.telecom) {
      // in sandbox mode time can be moved forward (docs/sandbox.md#sandbox-clock); the platform's Clock is this one
      b.factory(
        SANDBOX.Clock,
        (r) => new SandboxClock(r(PLATFORM.BaseClock), r(PLATFORM.ReadDb), r(PLATFORM.Logger), { refreshMs: cfg.SANDBOX_CLOCK_REFRESH_MS }),
      );
      b.toClass(SANDBOX.Faults, SandboxFaults);
      b.factory(
        SANDBOX.Carrier,
        (r) =>
          new SandboxCarrier(r(PLATFORM.ReadDb), r(PLATFORM.Clock), r(SANDBOX.Faults), {
            quarantineMs: cfg.SANDBOX_CARRIER_QUARANTINE_SECONDS * 1000,
            inboundBase: publicUrl(cfg),
          }),
      );
      b.toClass(SANDBOX.SipTrunks, SandboxSipTrunks);
      b.factory(
        SANDBOX.SmsCarrier,
        (r) =>
          new SandboxSmsCarrier(r(PLATFORM.ReadDb), r(PLATFORM.Clock), r(PLATFORM.Ids), {
            timing: {
              sentDelayMs: cfg.SANDBOX_SMS_SENT_DELAY_MS,
              deliveryDelayMs: cfg.SANDBOX_SMS_DELIVERY_DELAY_MS,
              lateDeliveryDelayMs: cfg.SANDBOX_SMS_LATE_DELIVERY_DELAY_MS,
            },
            ratePerMinute: cfg.SANDBOX_SMS_RATE_PER_MINUTE,
            registerUrl: `${publicUrl(cfg)}/v1/register`,
          }),
      );
      b.factory(SANDBOX.SmsReceipts, (r) => smsReceipts(r(PLATFORM.ReadDb)));
      b.factory(
        SANDBOX.VoiceEngine,
        (r) =>
          new SandboxVoiceEngine(
            {
              wordsPerMinute: cfg.SANDBOX_VOICE_WORDS_PER_MINUTE,
              ringMs: cfg.SANDBOX_VOICE_RING_MS,
              replyPauseMs: cfg.SANDBOX_VOICE_REPLY_PAUSE_MS,
            },
            r(PLATFORM.Clock),
            r(PLATFORM.Logger),
          ),
      );
      b.factory(
        SANDBOX.RegistrationReview,
        (r) =>
          new SandboxRegistrationReview(r(PLATFORM.Executor), r(REGISTRATION.Queries), r(REGISTRATION.Registrations), {
            approvalSeconds: cfg.SANDBOX_REGISTRATION_APPROVAL_SECONDS,
          }),
      );
    }
    if (on.chatapp) {
      b.factory(
        SANDBOX.ChatPlatform,
        (r) =>
          new SandboxChatPlatform(r(PLATFORM.ReadDb), r(PLATFORM.Clock), r(PLATFORM.Ids), {
            reviewMs: cfg.SANDBOX_CHATAPP_TEMPLATE_REVIEW_SECONDS * 1000,
            statusDelayMs: cfg.SANDBOX_CHATAPP_STATUS_DELAY_MS,
          }),
      );
      b.factory(SANDBOX.ChatReports, (r) => chatappReports(r(PLATFORM.ReadDb)));
    }
    if (on.rich) {
      b.factory(
        SANDBOX.RichProvider,
        (r) =>
          new SandboxRichProvider(r(PLATFORM.ReadDb), r(PLATFORM.Clock), r(PLATFORM.Ids), {
            deliveryMs: cfg.SANDBOX_RICH_DELIVERY_DELAY_MS,
            readMs: cfg.SANDBOX_RICH_READ_DELAY_SECONDS * 1000,
          }),
      );
      b.factory(SANDBOX.RichReports, (r) => richReports(r(PLATFORM.ReadDb)));
    }
  },
  // the sandbox kit's carrier: numbers and lookups, and texts (CARRIER=sandbox, the default in sandbox mode)
  carriers: (cfg) =>
    sandboxParts(cfg).telecom ? [{ name: 'sandbox', numbers: (r) => r(SANDBOX.Carrier), texts: (r) => r(SANDBOX.SmsCarrier) }] : [],
  start: async (r) => {
    if (sandboxParts(r(PLATFORM.Config)).telecom) await r(SANDBOX.Clock).start();
  },
  routes: {
    public: (api, r) => {
      const cfg = r(PLATFORM.Config);
      const on = sandboxParts(cfg);
      if (on.telecom) {
        sandboxCarrierRoutes(api, { carrier: r(SANDBOX.Carrier) });
        sandboxFaultRoutes(api, { faults: r(SANDBOX.Faults) });
        sandboxSipTrunkRoutes(api, { trunks: r(SANDBOX.SipTrunks) });
        // the outbox exists only while mail stays local
        if (!cfg.SMTP_URL) sandboxOutboxRoutes(api, { queries: r(SIGNUP.Queries) });
        sandboxRegistrationRoutes(api, { registrations: r(REGISTRATION.Registrations) });
        sandboxSmsRoutes(api, { carrier: r(SANDBOX.SmsCarrier), messages: messagesOf(r) });
        sandboxVoiceRoutes(api, { engine: r(SANDBOX.VoiceEngine), trunks: r(SIP.Trunks) });
        sandboxClockRoutes(api, { clock: r(SANDBOX.Clock) });
      }
      if (on.chatapp) sandboxChatappRoutes(api, { platform: r(SANDBOX.ChatPlatform), messages: messagesOf(r) });
      if (on.rich)
        sandboxRichRoutes(api, {
          provider: r(SANDBOX.RichProvider),
          events: richEventsOf(r),
          messages: messagesOf(r),
          clock: r(PLATFORM.Clock),
        });
    },
  },
  workers: (r, cfg) => {
    const on = sandboxParts(cfg);
    const clock = r(PLATFORM.Clock);
    const log = r(PLATFORM.Logger);
    return [
      ...(on.telecom
        ? [
            new ReportWorker('sandbox-sms-receipts', r(SANDBOX.SmsReceipts), (c) => messagesOf(r)().receipt(c), clock, log, {
              pollIntervalMs: cfg.SANDBOX_SMS_POLL_INTERVAL_MS,
              leaseMs: cfg.SANDBOX_SMS_RECEIPT_LEASE_MS,
            }),
            // each pass approves the registrations whose review delay has passed
            new PassWorker('sandbox-registration-review', () => r(SANDBOX.RegistrationReview).approveDue(), log, {
              intervalMs: 1000,
              logged: 'sandbox registrations approved',
            }),
          ]
        : []),
      ...(on.chatapp
        ? [
            new ReportWorker(
              'sandbox-chatapp-reports',
              r(SANDBOX.ChatReports),
              async (p) => {
                if (p.kind === 'status') await messagesOf(r)().receipt(p.receipt);
                else await chatappEventsOf(r)().templateReviewed(p.review);
              },
              clock,
              log,
              { pollIntervalMs: cfg.SANDBOX_CHATAPP_POLL_INTERVAL_MS, leaseMs: cfg.SANDBOX_CHATAPP_REPORT_LEASE_MS },
            ),
          ]
        : []),
      ...(on.rich
        ? [
            new ReportWorker(
              'sandbox-rich-reports',
              r(SANDBOX.RichReports),
              (c) =>
                messagesOf(r)().receipt({
                  channel: RICH_CHANNEL,
                  providerMessageId: c.providerMessageId,
                  receiptId: c.reportId,
                  status: c.status,
                  at: c.dueAt,
                  failure: null,
                }),
              clock,
              log,
              { pollIntervalMs: cfg.SANDBOX_RICH_POLL_INTERVAL_MS, leaseMs: cfg.SANDBOX_RICH_REPORT_LEASE_MS },
            ),
          ]
        : []),
    ];
  },
  // the calls held here end with the process: their far ends are hung up (`ended('local_hangup')`); then the clock stops
  close: async (r) => {
    if (!sandboxParts(r(PLATFORM.Config)).telecom) return;
    await r(SANDBOX.VoiceEngine).close();
    await r(SANDBOX.Clock).stop();
  },
  // released migrations keep their names and numbers, from the ranges of the capabilities they once belonged to
  migrations: {
    '021-sandbox-telecom': m021,
    '030-sandbox-clock': m030,
    '060-sandbox-sms': m060,
    '101-sandbox-chatapp': m101,
    '111-sandbox-rich': m111,
    '112-sandbox-rich-report-order': m112,
    '162-sandbox-report-subjects': m162,
  },
  errors: {
    SANDBOX_CALL_REFUSED: {
      ...httpError.conflict,
      fix: "Call one of the platform's active numbers that has an agent, in a process that hosts calls.",
    },
    SANDBOX_CALL_NOT_CONNECTED: { ...httpError.conflict, fix: 'GET /sandbox/calls/{call_id} shows where the call is.' },
  } satisfies Record<SandboxVoiceErrorCode, unknown>,
  cli: (program, support) => {
    const cli = sandboxCli(program, support);
    sandboxCarrierCommands(cli);
    sandboxFaultCommands(cli);
    sandboxSmsCommands(cli);
    sandboxVoiceCommands(cli);
    sandboxClockCommands(cli);
    sandboxChatappCommands(cli);
    sandboxRichCommands(cli);
  },
} as const satisfies Capability;

import type { SandboxRegistrationReview } from '../../application/registration/sandbox-review.js';
import { token } from '../capabilities/token.js';
import type { SandboxCarrier } from './carrier/sandbox-carrier.js';
import type { SandboxSipTrunks } from './carrier/sip-trunks.js';
import type { SandboxChatPlatform } from './chatapp/chat-platform.js';
import type { SandboxChatappReports } from './chatapp/reports.js';
import type { SandboxClock } from './clock/clock.js';
import { SANDBOX_FAULTS } from './faults/faults.js';
import type { SandboxRichReports } from './rich/reports.js';
import type { SandboxRichProvider } from './rich/rich-provider.js';
import type { SandboxSmsReceipts } from './sms/receipts.js';
import type { SandboxSmsCarrier } from './sms/sms-carrier.js';
import type { SandboxVoiceEngine } from './voice/engine.js';

/**
 * The sandbox kit's tokens (docs/sandbox.md), bound by its module while its part runs; the capabilities alias their
 * ports to them (the carrier, the SMS carrier, the SIP provider, the voice engine, the chat platform, the rich
 * provider; the platform's Clock to the sandbox clock).
 */
export const SANDBOX = {
  Clock: token<SandboxClock>('SandboxClock'),
  Faults: SANDBOX_FAULTS,
  Carrier: token<SandboxCarrier>('SandboxCarrier'),
  SipTrunks: token<SandboxSipTrunks>('SandboxSipTrunks'),
  SmsCarrier: token<SandboxSmsCarrier>('SandboxSmsCarrier'),
  SmsReceipts: token<SandboxSmsReceipts>('SandboxSmsReceipts'),
  VoiceEngine: token<SandboxVoiceEngine>('SandboxVoiceEngine'),
  ChatPlatform: token<SandboxChatPlatform>('SandboxChatPlatform'),
  ChatReports: token<SandboxChatappReports>('SandboxChatappReports'),
  RichProvider: token<SandboxRichProvider>('SandboxRichProvider'),
  RichReports: token<SandboxRichReports>('SandboxRichReports'),
  RegistrationReview: token<SandboxRegistrationReview>('SandboxRegistrationReview'),
} as const;

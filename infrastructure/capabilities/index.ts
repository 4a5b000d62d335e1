import type { WebhookMapping } from '../../application/webhooks/registry.js';
import type { ErrorCode } from '../../domain/shared/errors.js';
import type { Projector } from '../../projections/shared/projector.js';
import { accounts } from '../accounts/module.js';
import { agents } from '../agents/module.js';
import { analytics } from '../analytics/module.js';
import { audit } from '../audit/module.js';
import { calls } from '../calls/module.js';
import { twilioCarrier } from '../carriers/twilio/module.js';
import { chatapp } from '../chatapp/module.js';
import { webConsole } from '../console/module.js';
import { contacts } from '../contacts/module.js';
import type { PLATFORM_ERRORS } from '../http/errors.js';
import { messaging } from '../messaging/module.js';
import { numbers } from '../numbers/module.js';
import { platform } from '../platform/module.js';
import { recordingAddOn } from '../recording-addon/module.js';
import { registration } from '../registration/module.js';
import { rich } from '../rich/module.js';
import { sandbox } from '../sandbox/module.js';
import { signUp } from '../signup/module.js';
import { sip } from '../sip/module.js';
import { sipTrunks } from '../sip-trunks/module.js';
import { webCalls } from '../web-calls/module.js';
import { webhooks } from '../webhooks/module.js';
import type { Capability } from './capability.js';

/**
 * Every capability the service runs, one line each (docs/adding-a-capability.md). The HTTP app, the runtime
 * roles, the migrator, the projection engine and the CLI iterate this list; nothing else names a capability.
 */
export const capabilities = [
  platform,
  accounts,
  agents,
  numbers,
  sipTrunks,
  signUp,
  webhooks,
  messaging,
  calls,
  webCalls,
  sip,
  registration,
  rich,
  contacts,
  recordingAddOn,
  chatapp,
  twilioCarrier,
  sandbox,
  analytics,
  audit,
  webConsole,
] as const satisfies readonly Capability[];

/** What a list of capabilities contributes to each other: every projector (the projection engine, rebuilds) and webhook mapping (the dispatcher). */
export const projectorsOf = (list: readonly Capability[]): readonly Projector[] => list.flatMap((m) => m.projectors ?? []);
export const webhookMappingsOf = (list: readonly Capability[]): readonly WebhookMapping[] => list.flatMap((m) => m.webhookMappings ?? []);
export const allProjectors: readonly Projector[] = projectorsOf(capabilities);

/** Fails the type check while an error code has no HTTP mapping in the platform's table or a capability's. */
type ErrorsOf<M> = M extends { readonly errors: infer E } ? keyof E : never;
type Mapped = keyof typeof PLATFORM_ERRORS | ErrorsOf<(typeof capabilities)[number]>;
export const everyErrorCodeIsMapped: [Exclude<ErrorCode, Mapped>] extends [never] ? true : Exclude<ErrorCode, Mapped> = true;

import { TEMPLATE_CATEGORIES } from '../../domain/chatapp/template.decider.js';
import { E164 } from '../agents/agent.schemas.js';
import { z } from '../http/openapi.js';

/** Request and answer shapes of the chat-application channel (docs/chatapp.md); snake_case bodies as the spec names them. */
const PlatformId = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be the platform id: 1-64 letters, digits, _ . or -');

export const ConnectRequest = z
  .object({
    business_account_id: PlatformId.openapi({ description: "the platform's id of the business account" }),
    access_token: z
      .string()
      .min(8)
      .max(4096)
      .openapi({ description: 'a token the platform issued for the business account; stored sealed, never returned' }),
  })
  .openapi('ChatappConnectRequest');

export const ConnectionResponse = z
  .object({
    id: z.string(),
    businessAccountId: z.string(),
    businessName: z.string().nullable(),
    status: z.enum(['pending', 'active', 'failed']).openapi({ description: 'pending while the platform verifies the token' }),
    failureReason: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('ChatappConnection');

export const ConnectionDeleted = z
  .object({ success: z.boolean(), id: z.string(), businessAccountId: z.string(), status: z.literal('deleted') })
  .openapi('ChatappConnectionDeleted');

export const BindRequest = z
  .object({
    phone_number_id: PlatformId.openapi({ description: "the platform's id of a number of the connected business account" }),
    agent_id: z
      .string()
      .min(1)
      .max(100)
      .nullish()
      .openapi({ description: "the agent of a chat-only number (a dual-channel number follows its native number's agent)" }),
    pin: z
      .string()
      .regex(/^\d{6}$/, 'must be 6 digits')
      .nullish()
      .openapi({ description: "the number's six-digit two-step verification PIN: the cloud API registers a number only with it" }),
  })
  .openapi('ChatappBindRequest');

export const NumberResponse = z
  .object({
    id: z.string(),
    connectionId: z.string(),
    phoneNumberId: z.string(),
    phoneNumber: z.string().nullable(),
    verifiedName: z.string().nullable(),
    agentId: z.string().nullable(),
    numberId: z
      .string()
      .nullable()
      .openapi({ description: 'the line: `number_id` of POST /v1/messages and `phoneNumberId` of its conversations' }),
    dualChannel: z.boolean().openapi({ description: 'the same E.164 is a native number of the account: one number, two channels' }),
    status: z.enum(['pending', 'bound', 'failed', 'unbound']),
    failureReason: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('ChatappNumber');

const Button = z.discriminatedUnion('type', [
  z.object({ type: z.literal('quick_reply'), text: z.string().min(1).max(25) }),
  z.object({ type: z.literal('url'), text: z.string().min(1).max(25), url: z.url({ protocol: /^https?$/ }).max(2000) }),
  z.object({ type: z.literal('phone_number'), text: z.string().min(1).max(25), phone_number: E164 }),
]);

export const TemplateRequest = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9_]{1,512}$/, 'must be 1-512 lower-case letters, digits and _')
      .openapi({ description: 'a name starting with `reject_` is rejected by the sandbox platform' }),
    language: z.string().regex(/^[a-z]{2,3}(_[A-Z]{2})?$/, 'must be a language code such as en or en_US'),
    category: z.preprocess((v) => (typeof v === 'string' ? v.toLowerCase() : v), z.enum(TEMPLATE_CATEGORIES)),
    body: z.string().min(1).max(1024).openapi({ description: 'positional {{1}}, {{2}}, … or named {{order_id}} variables, not both' }),
    header: z.string().min(1).max(60).nullish(),
    buttons: z.array(Button).max(10).nullish(),
    examples: z
      .union([z.array(z.string().min(1).max(1024)).max(100), z.record(z.string(), z.string().min(1).max(1024))])
      .nullish()
      .openapi({ description: "values the platform's reviewers see: an array for positional variables, an object for named ones" }),
  })
  .openapi('ChatappTemplateRequest');

export const TemplateResponse = z
  .object({
    id: z.string(),
    connectionId: z.string(),
    name: z.string(),
    language: z.string(),
    category: z.string(),
    body: z.string(),
    header: z.string().nullable(),
    buttons: z.array(z.record(z.string(), z.unknown())),
    parameterFormat: z.enum(['none', 'positional', 'named']),
    variables: z.array(z.string()).openapi({ description: 'the names of a named template, or "1", "2", … of a positional one' }),
    status: z.enum(['pending', 'approved', 'rejected']),
    rejectionReason: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('ChatappTemplate');

export const SettingsBody = z.object({ enabled: z.boolean() }).strict().openapi('ChatappSettings');

export const ConnectionIdParams = z.object({ connection_id: z.string().min(1).max(100) });
export const NumberParams = z.object({ connection_id: z.string().min(1).max(100), chatapp_number_id: z.string().min(1).max(100) });
export const TemplateParams = z.object({ connection_id: z.string().min(1).max(100), template_id: z.string().min(1).max(100) });

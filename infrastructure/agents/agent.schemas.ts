import { AMBIENT_SOUNDS, DENOISING_MODES, LANGUAGES, MODEL_TIERS, STT_MODES, VOICE_MODES } from '../../domain/agent/agent.js';
import { z } from '../http/openapi.js';

export const E164 = z.string().regex(/^\+[1-9]\d{1,14}$/, 'must be an E.164 phone number such as +14155550123');

const CustomTool = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, numbers, underscores and hyphens; at most 64 characters'),
    description: z.string().min(1).max(1000),
    url: z.url({ protocol: /^https$/, error: 'must be an https URL' }),
    method: z.enum(['GET', 'POST']).default('POST'),
    headers: z
      .record(z.string(), z.string())
      .nullish()
      .transform((v) => v ?? null),
    parameters: z
      .record(z.string(), z.unknown())
      .nullish()
      .transform((v) => v ?? null),
    timeoutMs: z
      .number()
      .int()
      .min(1000)
      .max(120_000)
      .nullish()
      .transform((v) => v ?? null),
    speakDuringExecution: z
      .boolean()
      .nullish()
      .transform((v) => v ?? null),
    executionMessage: z
      .string()
      .max(1000)
      .nullish()
      .transform((v) => v ?? null),
  })
  .openapi('CustomToolParam');

const CustomTools = z
  .array(CustomTool)
  .max(20)
  .refine((ts) => new Set(ts.map((t) => t.name)).size === ts.length, 'tool names must be unique');

/** Optional text that may be null; "" clears it too. */
const clearableText = (max: number) =>
  z
    .string()
    .max(max)
    .nullable()
    .transform((v) => (v === '' ? null : v));

/** Fields shared by create and update; `null` on a non-nullable field means "leave as is". */
const agentFields = {
  description: clearableText(2000),
  voiceMode: z.enum(VOICE_MODES),
  enableMessaging: z.boolean(),
  modelTier: z.enum(MODEL_TIERS),
  systemPrompt: clearableText(20_000),
  beginMessage: z.string().max(2000).nullable(),
  voice: z.string().min(1).max(100),
  transferNumber: z
    .union([E164, z.literal('')])
    .nullable()
    .transform((v) => (v === '' ? null : v)),
  customTools: CustomTools.nullable(),
  voicemailMessage: clearableText(2000),
  callScreeningIdentity: clearableText(500),
  callScreeningPurpose: clearableText(500),
  sttMode: z.enum(STT_MODES),
  ambientSound: z.enum(AMBIENT_SOUNDS),
  denoisingMode: z.enum(DENOISING_MODES),
  maxSilenceMs: z.number().int().min(10_000).max(3_600_000),
  voiceSpeed: z.number().min(0.5).max(2),
  interruptionSensitivity: z.number().min(0).max(1),
  enableBackchannel: z.boolean(),
  language: z.enum(LANGUAGES),
};

const nonNullable = [
  'voiceMode',
  'enableMessaging',
  'modelTier',
  'voice',
  'sttMode',
  'ambientSound',
  'denoisingMode',
  'maxSilenceMs',
  'voiceSpeed',
  'interruptionSensitivity',
  'enableBackchannel',
  'language',
] as const;

const optionalFields = Object.fromEntries(
  Object.entries(agentFields).map(([k, s]) => [
    k,
    (nonNullable as readonly string[]).includes(k)
      ? (s as z.ZodType).nullish().transform((v: unknown) => v ?? undefined)
      : (s as z.ZodType).optional(),
  ]),
) as { [K in keyof typeof agentFields]: z.ZodOptional<z.ZodType<z.output<(typeof agentFields)[K]> | undefined>> };

/** `greeting` is accepted as an alias of `beginMessage` (docs/agents.md#fields). */
const withGreetingAlias = <T extends { beginMessage?: string | null | undefined; greeting?: string | null | undefined }>(v: T) => {
  const { greeting, ...rest } = v;
  return { ...rest, beginMessage: v.beginMessage !== undefined ? v.beginMessage : greeting } as Omit<T, 'greeting'>;
};

export const CreateAgentRequest = z
  .object({
    name: z.string().trim().min(1).max(100),
    ...optionalFields,
    greeting: z.string().max(2000).nullable().optional(),
  })
  .transform(withGreetingAlias)
  .openapi('CreateAgentRequest');

export const UpdateAgentRequest = z
  .object({
    name: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .nullish()
      .transform((v) => v ?? undefined),
    ...optionalFields,
    greeting: z.string().max(2000).nullable().optional(),
  })
  .transform(withGreetingAlias)
  .openapi('UpdateAgentRequest');

export const AgentNumber = z
  .object({ id: z.string(), phoneNumber: z.string(), status: z.string(), type: z.string() })
  .openapi('AgentNumberResponse');

export const AgentResponse = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    voiceMode: z.enum(VOICE_MODES),
    enableMessaging: z.boolean(),
    modelTier: z.enum(MODEL_TIERS),
    systemPrompt: z.string().nullable(),
    beginMessage: z.string().nullable(),
    voice: z.string(),
    transferNumber: z.string().nullable(),
    customTools: z.array(CustomTool).nullable(),
    voicemailMessage: z.string().nullable(),
    callScreeningIdentity: z.string().nullable(),
    callScreeningPurpose: z.string().nullable(),
    sttMode: z.enum(STT_MODES),
    ambientSound: z.enum(AMBIENT_SOUNDS),
    denoisingMode: z.enum(DENOISING_MODES),
    maxSilenceMs: z.number().int(),
    voiceSpeed: z.number(),
    interruptionSensitivity: z.number(),
    enableBackchannel: z.boolean(),
    language: z.string(),
    createdAt: z.string(),
    numbers: z.array(AgentNumber),
  })
  .openapi('AgentResponse');

export const AgentIdParams = z.object({ agent_id: z.string().min(1).max(64) });

export const DeleteAgentResponse = z.object({ success: z.boolean(), id: z.string(), name: z.string() }).openapi('DeleteAgentResponse');

export const VoicesResponse = z
  .object({
    data: z.array(
      z.object({
        voice_id: z.string(),
        voice_name: z.string(),
        provider: z.string(),
        gender: z.string(),
        accent: z.string().nullable(),
        preview_audio_url: z.string().nullable(),
      }),
    ),
  })
  .openapi('VoicesResponse');

import type { CallMode, CallSettings, ModelTier } from '../../domain/call/call.js';
import { fillTemplate } from '../../domain/call/template.js';
import type { AgentView } from '../agents/agent-queries.port.js';

/** What a request may override for one call (docs/calls.md#placing-a-call). */
export type CallOverrides = Readonly<{
  greeting?: string | null;
  voice?: string | null;
  systemPrompt?: string | null;
  modelTier?: ModelTier | null;
  variables?: Readonly<Record<string, string>> | null;
  callScreeningIdentity?: string | null;
  callScreeningPurpose?: string | null;
  disableRecording?: boolean;
  metadata?: Readonly<Record<string, unknown>> | null;
}>;

/**
 * The settings a call runs with: the agent's configuration as of placing it, the request's overrides on top, and
 * `{{var}}` placeholders of the prompt and greeting filled from `variables` (unknown ones are reported, left as written).
 */
export function callSettings(
  agent: AgentView,
  o: CallOverrides,
  env: Readonly<{
    sip: boolean;
    trunkTransfers: CallSettings['trunkTransfers'];
    trunkTransferCallerId?: CallSettings['trunkTransferCallerId'];
    recordingActive: boolean;
    maxDurationSeconds: number;
  }>,
): CallSettings {
  const systemPrompt = o.systemPrompt ?? agent.systemPrompt;
  const mode: CallMode = env.sip ? 'sip' : o.systemPrompt || agent.voiceMode === 'hosted' ? 'hosted' : 'webhook';
  const variables = { ...(o.variables ?? {}) };
  const prompt = systemPrompt === null ? null : fillTemplate(systemPrompt, variables);
  const rawGreeting = o.greeting !== undefined && o.greeting !== null ? o.greeting : agent.beginMessage;
  const greeting = rawGreeting === null ? null : fillTemplate(rawGreeting, variables);
  const unknown = [...new Set([...(prompt?.unknown ?? []), ...(greeting?.unknown ?? [])])];
  // only a purpose set: the agent's name is the identity (docs/calls.md#call-screening)
  const purpose = o.callScreeningPurpose ?? agent.callScreeningPurpose;
  const identity = o.callScreeningIdentity ?? agent.callScreeningIdentity;
  return {
    mode,
    greeting: greeting?.text || null,
    voice: o.voice ?? agent.voice,
    systemPrompt: prompt?.text ?? null,
    modelTier: o.modelTier ?? agent.modelTier,
    variables,
    unknownVariables: unknown,
    screeningIdentity: purpose ? (identity ?? agent.name) : identity,
    screeningPurpose: purpose,
    voicemailMessage: agent.voicemailMessage,
    transferNumber: agent.transferNumber,
    trunkTransfers: env.trunkTransfers,
    ...(env.trunkTransferCallerId ? { trunkTransferCallerId: env.trunkTransferCallerId } : {}),
    recording: env.recordingActive && o.disableRecording !== true,
    enableBackchannel: agent.enableBackchannel,
    interruptionSensitivity: agent.interruptionSensitivity,
    maxSilenceMs: agent.maxSilenceMs,
    maxDurationSeconds: env.maxDurationSeconds,
    metadata: o.metadata ?? null,
  };
}

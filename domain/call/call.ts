/**
 * The voice call's vocabulary (docs/calls.md#the-call-record). A call is one stream, `call-{callId}`; every turn,
 * tone and transfer is an event on it, and it always reaches a final state (`completed` or `failed`).
 */
export const callStream = (callId: string) => `call-${callId}`;

export type CallDirection = 'inbound' | 'outbound' | 'web';
export type CallMode = 'webhook' | 'hosted' | 'sip';
export type AnsweredBy = 'human' | 'voicemail' | 'screener' | 'unknown';
export type ModelTier = 'turbo' | 'balanced' | 'max';

/** Why a call ended (`disconnectionReason`, docs/calls.md#how-a-call-ends). */
export const DISCONNECTION_REASONS = [
  'user_hangup',
  'agent_hangup',
  'call_transfer',
  'voicemail_reached',
  'ended_by_api',
  'max_duration_reached',
  'inactivity',
  'host_lost',
  'dial_busy',
  'dial_no_answer',
  'invalid_destination',
  'telephony_error',
  'sip_unreachable',
  'canceled',
] as const;
export type DisconnectionReason = (typeof DISCONNECTION_REASONS)[number];

/** Whose number a transferred call shows its target: the party transferred, or the number that transfers it. */
export type TransferCallerId = 'transferee' | 'transferor';

/** What the call was set up with: the agent's settings as of placing it, with the request's overrides applied. */
export type CallSettings = Readonly<{
  mode: CallMode;
  /** spoken on answer; '' or null: silent until the far end speaks */
  greeting: string | null;
  voice: string;
  systemPrompt: string | null;
  modelTier: ModelTier;
  variables: Readonly<Record<string, string>>;
  /** placeholders of the prompt and greeting that `variables` did not fill (left as written) */
  unknownVariables: readonly string[];
  screeningIdentity: string | null;
  screeningPurpose: string | null;
  voicemailMessage: string | null;
  transferNumber: string | null;
  /** transfers allowed by the number's SIP trunk (`all`, `sip`, `none`), or null without one */
  trunkTransfers: 'all' | 'sip' | 'none' | null;
  /**
   * whose number a transfer shows the target when the number routes through a SIP trunk (docs/sip.md#transfers):
   * `transferee`, the far end's (the default), or `transferor`, the platform's number; absent without a trunk
   */
  trunkTransferCallerId?: TransferCallerId;
  /** audio is stored (the recording add-on was active and the request did not disable it) */
  recording: boolean;
  enableBackchannel: boolean;
  interruptionSensitivity: number;
  maxSilenceMs: number;
  maxDurationSeconds: number;
  metadata: Readonly<Record<string, unknown>> | null;
}>;

/**
 * How long the platform took on one agent turn, in milliseconds (docs/calls.md#latency). The steps follow one
 * another: recognition, request, first byte, speech start, synthesis. `recognitionMs` and `synthesisMs` are
 * measured where the platform itself recognises and renders speech (web calls); turns recorded before they
 * existed do not carry them.
 */
export type TurnLatency = Readonly<{
  /** the end of the caller's utterance was detected → its transcript was ready */
  recognitionMs?: number | null;
  /** the caller's transcript was ready → the webhook or model request left */
  requestMs: number | null;
  /** the request left → the first byte (or token) of the reply came back */
  firstByteMs: number | null;
  /** the first reply byte → the reply's first speech was handed to the voice engine */
  speechStartMs: number | null;
  /** the first speech handed over → its audio was rendered (the speech engine's time) */
  synthesisMs?: number | null;
}>;

/** Something a reply asked for besides speech, and its outcome (a refused transfer says why). */
export type TurnAction = Readonly<{
  type: 'transfer' | 'digits' | 'end_call';
  value: string | null;
  outcome: 'done' | 'refused' | 'failed';
  detail: string | null;
}>;

export type AgentTurnSource = 'greeting' | 'webhook' | 'model' | 'voicemail' | 'screening';

export type TranscriptEntry = Readonly<{ role: 'agent' | 'user'; content: string }>;

/**
 * What the line's engine reports about a call's media when the call ends (docs/sip.md#observability): RTP packets
 * and bytes each way, and of the caller's packets those lost (never arrived in time), late (came after their place
 * was played, or twice) and the interarrival jitter (RFC 3550 §6.4.1), in milliseconds.
 */
export type LegMedia = Readonly<{
  codec: 'PCMU' | 'PCMA';
  sent: Readonly<{ packets: number; bytes: number }>;
  received: Readonly<{ packets: number; bytes: number; lost: number; late: number; jitterMs: number }>;
}>;

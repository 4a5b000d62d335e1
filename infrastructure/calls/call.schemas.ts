import { CALL_STATUSES, CALL_TYPES } from '../../application/calls/call-queries.port.js';
import { z } from '../http/openapi.js';
import { offsetEnvelope, offsetQuery, queryInt } from '../http/pagination.js';

/** The HTTP shapes of the read side of calls (docs/calls.md). */

export const CallIdParams = z.object({ call_id: z.string().min(1).max(100) });
export const AgentIdParams = z.object({ agent_id: z.string().min(1).max(100) });

/** An absent or empty query value is no filter (clients send `?status=` for "any"). */
const optional = <T extends z.ZodType>(t: T) => z.preprocess((v) => (v === '' ? undefined : v), t.optional());

/** `true`/`false` (also `1`/`0`) in a query string; anything else is a 422. */
const queryBool = (def: boolean) =>
  z.preprocess(
    (v) => (v === undefined || v === '' ? undefined : v),
    z
      .enum(['true', 'false', '1', '0'])
      .optional()
      .transform((v) => (v === undefined ? def : v === 'true' || v === '1')),
  );

export const CallListQuery = offsetQuery().extend({
  status: optional(z.enum(CALL_STATUSES)).openapi({ description: 'Filter by status: completed, in-progress, failed' }),
  direction: optional(z.enum(['inbound', 'outbound', 'web'])).openapi({ description: 'Filter by direction: inbound, outbound, web' }),
  type: optional(z.enum(CALL_TYPES)).openapi({ description: 'Filter by type: pstn (phone calls), web (browser calls)' }),
  search: optional(z.string().max(100)).openapi({ description: 'Search fromNumber or toNumber (contains)' }),
});

/** Long-poll limits of `GET /v1/calls/{id}?wait=true` (docs/calls.md#waiting-for-the-end). */
export const MAX_WAIT_SECONDS = 300;
export const DEFAULT_WAIT_SECONDS = 30;

export const GetCallQuery = z.object({
  wait: queryBool(false).openapi({ description: 'answer once the call has ended (or the timeout has passed)' }),
  timeout: queryInt({ min: 1, max: MAX_WAIT_SECONDS, def: DEFAULT_WAIT_SECONDS }).openapi({
    description: `with wait=true: seconds to wait at most (default ${DEFAULT_WAIT_SECONDS}, max ${MAX_WAIT_SECONDS})`,
  }),
});

export const TranscriptStreamHeaders = z.object({
  'last-event-id': z
    .string()
    .regex(/^\d{1,9}$/, 'must be the id of an event of this stream')
    .optional()
    .openapi({ description: 'the id of the last event received: only later turns are sent (EventSource sends it on reconnect)' }),
});

export const RecordingQuery = z.object({
  expires: z.string().max(20).optional().openapi({ description: 'Unix time in seconds after which the URL is refused' }),
  signature: z.string().max(128).optional().openapi({ description: 'hex HMAC-SHA256 of the call id and the expiry' }),
});

export const CallSummary = z
  .object({
    id: z.string(),
    agentId: z.string().nullable(),
    phoneNumberId: z.string().nullable(),
    phoneNumber: z.string().nullable(),
    fromNumber: z.string(),
    toNumber: z.string(),
    direction: z.string().openapi({ description: '`inbound`, `outbound` or `web`' }),
    status: z.string().openapi({ description: '`in-progress`, `completed` or `failed`' }),
    startedAt: z.string(),
    endedAt: z.string().nullable(),
    durationSeconds: z.number().int().nullable(),
    lastTranscriptSnippet: z.string().nullable(),
    type: z.string().openapi({ description: '`pstn` (a phone call) or `web` (a browser call)' }),
    disconnectionReason: z.string().nullable(),
    recordingAvailable: z.boolean().openapi({ description: 'the call has stored audio' }),
  })
  .openapi('CallSummary');
export const CallListResponse = offsetEnvelope(CallSummary).openapi('CallListResponse');

export const CallTurnLatency = z
  .object({
    recognitionMs: z.number().nullable(),
    requestMs: z.number().nullable(),
    firstByteMs: z.number().nullable(),
    speechStartMs: z.number().nullable(),
    synthesisMs: z.number().nullable(),
  })
  .openapi('CallTurnLatency', {
    description:
      'milliseconds, one step after another: the end of the caller’s utterance → its transcript (web calls); the transcript → the reply was requested; ' +
      'the request → its first byte; the first byte → speech handed to the voice engine; → its audio rendered (web calls)',
  });

export const CallTurnAction = z
  .object({
    type: z.enum(['transfer', 'digits', 'end_call']),
    value: z.string().nullable(),
    outcome: z.enum(['done', 'refused', 'failed']),
    detail: z.string().nullable(),
  })
  .openapi('CallTurnAction', { description: "what an agent turn's reply asked for besides speech, and how it went" });

export const CallTurn = z
  .object({
    id: z.string(),
    seq: z.number().int().openapi({ description: '1, 2, 3, … in the order of the call; the id of its transcript stream event' }),
    role: z.enum(['user', 'agent']),
    content: z.string().openapi({ description: 'what the far end heard' }),
    text: z.string().openapi({ description: "the caller's transcript, or everything the agent meant to say" }),
    spoken: z.string(),
    interrupted: z.boolean(),
    source: z.string().nullable().openapi({ description: "an agent turn's origin: greeting, webhook, model, voicemail, screening" }),
    confidence: z.number().nullable(),
    replyTo: z.string().nullable(),
    silentReason: z.string().nullable(),
    latency: CallTurnLatency.nullable(),
    actions: z.array(CallTurnAction),
    startedAt: z.string(),
    endedAt: z.string(),
  })
  .openapi('CallTurn');

export const CallTranscriptItem = z
  .object({ id: z.string(), transcript: z.string(), response: z.string().nullable(), createdAt: z.string() })
  .openapi('CallTranscriptItem', { description: "a caller utterance and the agent's reply to it, as heard" });

export const CallMedia = z
  .object({
    codec: z.enum(['PCMU', 'PCMA']),
    sent: z.object({ packets: z.number().int(), bytes: z.number().int() }),
    received: z.object({
      packets: z.number().int(),
      bytes: z.number().int(),
      lost: z.number().int(),
      late: z.number().int(),
      jitterMs: z.number(),
    }),
  })
  .openapi('CallMedia', { description: "a call over SIP: its RTP each way when it ended (lost, late and jitter of the caller's packets)" });

export const CallDetail = CallSummary.extend({
  mode: z.string().nullable(),
  phase: z.enum(['placed', 'ringing', 'answered', 'recording', 'ended']),
  voice: z.string().nullable(),
  answeredAt: z.string().nullable(),
  answeredBy: z.string().nullable(),
  disconnectionDetail: z.string().nullable(),
  summary: z.string().nullable(),
  userSentiment: z.string().nullable(),
  callSuccessful: z.boolean().nullable(),
  recordingEnabled: z.boolean(),
  recordingDurationMs: z.number().int().nullable(),
  recordingUrl: z.string().nullable().openapi({ description: 'a signed URL of the audio, valid for RECORDING_URL_TTL_SECONDS' }),
  transferredTo: z.string().nullable(),
  sipUri: z.string().nullable(),
  sipTrunkId: z
    .string()
    .nullable()
    .openapi({ description: 'the SIP trunk the call was routed to, or (outbound) came in through from your PBX' }),
  sipFailures: z.array(z.object({ sipUri: z.string(), error: z.string() })),
  sipCallId: z.string().nullable().openapi({ description: 'the SIP Call-ID of a call over SIP' }),
  media: CallMedia.nullable(),
  digitsReceived: z.string().openapi({ description: 'the keypad tones the far end pressed, in order' }),
  unknownVariables: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  lastActivityAt: z.string(),
  transcripts: z.array(CallTranscriptItem),
  turns: z.array(CallTurn),
}).openapi('Call');

export const CallTranscript = z
  .object({
    callId: z.string(),
    status: z.string(),
    transcript: z.array(z.object({ role: z.enum(['agent', 'user']), content: z.string(), at: z.string() })),
    turns: z.array(CallTurn),
    transcripts: z
      .array(CallTranscriptItem)
      .openapi({ description: "each caller utterance with the agent's reply (as on the call record)" }),
    data: z.array(CallTranscriptItem).openapi({ description: 'the same as `transcripts`, under the name some clients read' }),
  })
  .openapi('CallTranscript');

import { DomainError } from '../../../domain/shared/errors.js';
import { E164 } from '../../agents/agent.schemas.js';
import type { Api } from '../../http/api.js';
import { z } from '../../http/openapi.js';
import { AddressBlock } from '../../sip/carriers.js';
import { type TrunkDirectory, trunksByAddress, trunksByCredentials } from '../../sip/trunk-book.js';
import { sandboxRoute } from '../shared/http.js';
import type { SandboxVoiceEngine } from './engine.js';
import { voiceMagicNumbers } from './magic.js';
import { InboundCallRefusedError, SandboxCallNotConnectedError, SandboxCallNotFoundError, type SandboxCallView } from './types.js';

const PERSONAS = [
  'talker',
  'busy',
  'no-answer',
  'provider-error',
  'invalid-number',
  'voicemail',
  'screener',
  'menu',
  'interrupter',
  'backchanneler',
  'silent',
  'hang-up',
] as const;
const ANSWERED_BY = ['human', 'voicemail', 'screener', 'unknown'] as const;

const CallIdParams = z.object({
  call_id: z.string().min(1).max(100).openapi({ description: "the platform's call id, or the engine's (`CA…`)" }),
});

const InboundBody = z
  .object({
    from: E164.openapi({ description: 'the caller; a persona number (docs/sandbox.md#voice) makes it follow that persona' }),
    to: E164.openapi({ description: "the platform's number called" }),
  })
  .openapi('SandboxCallInboundRequest');

const FromPbxBody = z
  .object({
    from: E164.openapi({ description: 'the caller id the PBX sends: a number of the account routed to the trunk' }),
    to: E164.openapi({ description: 'the number dialled (a persona number decides how the far end answers)' }),
    username: z.string().min(1).max(32).optional().openapi({ description: "one of the trunk's termination credentials" }),
    password: z.string().min(1).max(128).optional(),
    sourceAddress: AddressBlock.optional().openapi({
      description: "the PBX's address, one of the trunk's termination addresses (instead of credentials)",
      example: '203.0.113.7',
    }),
  })
  .strict()
  .refine((b) => (b.sourceAddress === undefined) !== (b.username === undefined && b.password === undefined), {
    message: 'give either username and password, or sourceAddress',
  })
  .refine((b) => (b.username === undefined) === (b.password === undefined), { message: 'username and password come together' })
  .openapi('SandboxCallFromPbxRequest');

const SayBody = z
  .object({
    text: z
      .string()
      .max(2000)
      .refine((t) => t.trim() !== '', 'must say at least one word')
      .openapi({ description: 'what the far end says now; over the agent speaking, it interrupts' }),
  })
  .openapi('SandboxCallSayRequest');

const DigitsBody = z
  .object({ digits: z.string().regex(/^[0-9*#]{1,32}$/, 'keypad keys: 0-9, * and #, at most 32') })
  .openapi('SandboxCallDigitsRequest');

const CallView = z
  .object({
    callId: z.string(),
    engineCallId: z.string(),
    direction: z.enum(['outbound', 'inbound']),
    from: z.string(),
    to: z.string(),
    persona: z.enum([...PERSONAS, 'driven']).openapi({ description: '`driven`: an inbound caller that speaks only through this API' }),
    stage: z.string().openapi({ description: 'what the far end is doing now, e.g. `talker: 2 of 4 lines said`' }),
    status: z.enum(['dialing', 'ringing', 'answered', 'failed', 'ended']),
    answeredBy: z.enum(ANSWERED_BY).nullable(),
    failure: z.object({ reason: z.enum(['busy', 'no_answer', 'invalid_number', 'provider_error']), detail: z.string() }).nullable(),
    endReason: z.enum(['remote_hangup', 'local_hangup', 'transferred', 'provider_error']).nullable(),
    endDetail: z.string().nullable(),
    createdAt: z.string(),
    ringingAt: z.string().nullable(),
    answeredAt: z.string().nullable(),
    endedAt: z.string().nullable(),
    agentSpeech: z
      .array(
        z.object({
          playbackId: z.string(),
          text: z.string(),
          voice: z.string(),
          wordsPerMinute: z.number(),
          heard: z.string().openapi({ description: 'the words the far end heard: all when finished, those before the cut when cut' }),
          state: z.enum(['queued', 'playing', 'finished', 'cut', 'dropped']),
          queuedAt: z.string(),
          startedAt: z.string().nullable(),
          endedAt: z.string().nullable(),
        }),
      )
      .openapi({ description: "the agent's playbacks, in order" }),
    farEndSpeech: z
      .array(
        z.object({
          utteranceId: z.string(),
          text: z.string(),
          transcript: z.string(),
          overAgent: z.boolean().openapi({ description: 'it began while the agent was speaking' }),
          fromSandboxApi: z.boolean(),
          startedAt: z.string(),
          endedAt: z.string().nullable(),
        }),
      )
      .openapi({ description: 'what the far end said, in order' }),
    digitsFromAgent: z.string(),
    digitsFromFarEnd: z.string(),
    beepAt: z.string().nullable(),
    voicemailMessage: z.string().nullable(),
    screenerHeard: z.string().nullable(),
    transferredTo: z.string().nullable(),
    bridgedTo: z.string().nullable().openapi({ description: 'the SIP URI that answered a bridge' }),
    bridgeAttempts: z.array(z.object({ sipUri: z.string(), outcome: z.string(), at: z.string() })),
  })
  .openapi('SandboxCall');

/** The engine's refusals as the API's errors: an unknown call is a 404, a call not connected or refused a 409. */
function controlled<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw asDomainError(err);
  }
}

function asDomainError(err: unknown): unknown {
  if (err instanceof SandboxCallNotFoundError) return new DomainError('NOT_FOUND', err.message);
  if (err instanceof SandboxCallNotConnectedError) return new DomainError('SANDBOX_CALL_NOT_CONNECTED', err.message);
  if (err instanceof InboundCallRefusedError) return new DomainError('SANDBOX_CALL_REFUSED', err.message);
  return err;
}

const QuietQuery = z.object({
  agentQuietAfter: z.coerce
    .number()
    .int()
    .min(0)
    .max(100_000)
    .optional()
    .openapi({ description: 'answer once the agent has made at least this many playbacks and none is queued or playing' }),
  timeout: z.coerce.number().int().min(1).max(60).default(10).openapi({ description: 'seconds to wait at most (with agentQuietAfter)' }),
});

/**
 * The sandbox voice engine's control API (mounted only with PROVIDER_MODE=sandbox, behind the admin token like
 * every /sandbox route; docs/sandbox.md#voice): ring a call in, make the far end speak, press keys or hang up,
 * and see a call as the far end does. The engine lives in the server's memory, so these reach the calls of the
 * process that answers them.
 */
export function sandboxVoiceRoutes(api: Api, { engine, trunks }: { engine: SandboxVoiceEngine; trunks: TrunkDirectory }): void {
  const view = (callId: string): SandboxCallView => {
    const v = engine.view(callId);
    if (!v) throw asDomainError(new SandboxCallNotFoundError(callId));
    return v;
  };

  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/calls/inbound',
    summary: "A phone calls one of the platform's numbers: the call is offered to the platform and answered at once when it accepts",
    body: InboundBody,
    errors: [409],
    response: z.object({ callId: z.string(), engineCallId: z.string() }),
    handler: async ({ body }) => {
      try {
        return await engine.ringInbound({ from: body.from, to: body.to });
      } catch (err) {
        throw asDomainError(err);
      }
    },
  });
  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/calls/from-pbx',
    summary:
      "A customer's PBX sends a call out through its SIP trunk, by the trunk's termination credentials or source address: the platform's rules decide it as the SIP engine's do",
    body: FromPbxBody,
    errors: [409],
    response: z.object({ callId: z.string(), engineCallId: z.string() }),
    handler: async ({ body }) => {
      const all = await trunks.list();
      const source = body.sourceAddress ?? null;
      const matched = source !== null ? trunksByAddress(all, source) : trunksByCredentials(all, body.username ?? '', body.password ?? '');
      // what the SIP engine answers such an INVITE (docs/sip.md#calls-from-your-pbx)
      if (matched.length === 0)
        throw new DomainError(
          'SANDBOX_CALL_REFUSED',
          source !== null
            ? `403: ${source} is no termination address of a SIP trunk`
            : "403: the credentials are no SIP trunk's termination credentials",
        );
      try {
        return await engine.callFromPbx({
          from: body.from,
          to: body.to,
          fromTrunk: { trunkIds: matched.map((t) => t.trunkId), source: `sip:${source ?? 'pbx@sandbox'}` },
        });
      } catch (err) {
        throw asDomainError(err);
      }
    },
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/calls/magic-numbers',
    summary: 'The far-end personas of sandbox calls, by the number dialled (or calling in)',
    response: z.object({
      data: z.array(
        z.object({
          phoneNumber: z.string(),
          persona: z.enum(PERSONAS),
          answeredBy: z.enum(ANSWERED_BY).nullable().openapi({ description: 'how the answer is classified; null when it never answers' }),
          description: z.string(),
        }),
      ),
    }),
    handler: async () => ({ data: voiceMagicNumbers() }),
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/calls',
    summary: 'Sandbox calls as their far ends see them: live ones and the most recent ended ones, newest first',
    query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) }),
    response: z.object({ data: z.array(CallView) }),
    handler: async ({ query }) => ({ data: engine.list().slice(0, query.limit) }),
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/calls/:call_id',
    summary:
      'One sandbox call as its far end sees it: what it heard from the agent, what it said, keys, transfer and bridge; with agentQuietAfter=N, answered once the agent has made N playbacks and is quiet, the call is over or the timeout has passed',
    params: CallIdParams,
    query: QuietQuery,
    errors: [404],
    response: CallView,
    handler: async ({ params, query, res }) => {
      if (query.agentQuietAfter !== undefined) {
        // the far end's wait for the agent's reply to be spoken; a client that goes away stops it at once
        const gone = new AbortController();
        const stop = () => gone.abort();
        res.on('close', stop);
        try {
          await engine.waitForAgentQuiet(params.call_id, query.agentQuietAfter, query.timeout * 1000, gone.signal);
        } finally {
          res.off('close', stop);
        }
      }
      return view(params.call_id);
    },
  });
  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/calls/:call_id/say',
    summary: 'The far end says something now (while the agent speaks, it interrupts)',
    params: CallIdParams,
    body: SayBody,
    errors: [404, 409],
    response: CallView,
    handler: async ({ params, body }) => {
      controlled(() => engine.say(params.call_id, body.text));
      return view(params.call_id);
    },
  });
  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/calls/:call_id/digits',
    summary: 'The far end presses keys: the platform receives one keypad tone per key',
    params: CallIdParams,
    body: DigitsBody,
    errors: [404, 409],
    response: CallView,
    handler: async ({ params, body }) => {
      controlled(() => engine.pressDigits(params.call_id, body.digits));
      return view(params.call_id);
    },
  });
  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/calls/:call_id/hangup',
    summary: 'The far end hangs up (an outbound call still ringing is declined: it fails busy)',
    params: CallIdParams,
    errors: [404, 409],
    response: CallView,
    handler: async ({ params }) => {
      controlled(() => engine.hangupRemote(params.call_id));
      return view(params.call_id);
    },
  });
}

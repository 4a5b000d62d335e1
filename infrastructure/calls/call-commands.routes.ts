import type { CallCommands } from '../../application/calls/call-commands.js';
import type { CallQueries } from '../../application/calls/call-queries.port.js';
import { MODEL_TIERS } from '../../domain/agent/agent.js';
import { DomainError } from '../../domain/shared/errors.js';
import { E164 } from '../agents/agent.schemas.js';
import type { Api } from '../http/api.js';
import { withAliases } from '../http/compat.js';
import { z } from '../http/openapi.js';
import { CallDetail, CallIdParams, MAX_WAIT_SECONDS } from './call.schemas.js';
import { withRecordingUrl } from './calls.routes.js';
import type { RecordingUrls } from './recording-urls.js';

const Variables = z.record(z.string().min(1).max(100), z.string().max(2000)).refine((v) => Object.keys(v).length <= 50, {
  message: 'at most 50 variables',
});
const Text = (max: number) => z.string().max(max);

/** The snake_case names some public clients send are aliases (docs/compatibility.md#request-aliases-snake_case-from-earlier-sdk-versions). */
const CreateOutboundCall = withAliases(
  z
    .object({
      agentId: z.string().min(1).max(100).openapi({ description: 'Alias: `agent_id`' }),
      toNumber: E164.openapi({ description: 'Alias: `to_number`' }),
      fromNumberId: z.string().min(1).max(100).nullish().openapi({ description: 'Alias: `from_number_id`' }),
      initialGreeting: Text(2000).nullish().openapi({ description: 'spoken on answer; an empty string: silent until the callee speaks' }),
      voice: z.string().min(1).max(100).nullish(),
      systemPrompt: Text(20_000)
        .nullish()
        .openapi({ description: "when present, the built-in model answers instead of the agent's webhook" }),
      modelTier: z.enum(MODEL_TIERS).nullish(),
      variables: Variables.nullish(),
      callScreeningIdentity: Text(500).nullish(),
      callScreeningPurpose: Text(500).nullish(),
      disableRecording: z.boolean().optional(),
      waitForCompletion: z.boolean().optional().openapi({ description: 'answer only once the call has ended (or maxWaitSeconds passed)' }),
      maxWaitSeconds: z.number().int().min(1).max(MAX_WAIT_SECONDS).optional(),
      metadata: z.record(z.string().max(100), z.unknown()).nullish(),
    })
    .openapi('CreateOutboundCallRequest'),
  { agent_id: 'agentId', to_number: 'toNumber', from_number_id: 'fromNumberId' },
);

const CreateWebCall = withAliases(
  z
    .object({
      agentId: z.string().min(1).max(100).openapi({ description: 'Alias: `agent_id`' }),
      metadata: z.record(z.string().max(100), z.unknown()).nullish(),
      variables: Variables.nullish(),
    })
    .openapi('CreateWebCallRequest'),
  { agent_id: 'agentId' },
);

const WebCallResponse = z
  .object({
    accessToken: z.string().openapi({ description: 'single use, valid for 30 seconds' }),
    callId: z.string(),
    expiresAt: z.string(),
  })
  .openapi('WebCallResponse');

const OutboundCallResponse = CallDetail.extend({ callId: z.string() }).openapi('OutboundCallResponse');

const SubAccountParams = z.object({ sub_account_id: z.string().min(1).max(100) });
const CallLimitBody = z
  .object({ maxConcurrentCalls: z.number().int().min(1).max(100_000).nullable() })
  .openapi('SubAccountCallLimit', { description: "a cap on the sub-account's live outbound calls; null: the account default" });
const CallLimitResponse = z
  .object({ subAccountId: z.string(), maxConcurrentCalls: z.number().int(), live: z.number().int(), own: z.boolean() })
  .openapi('SubAccountCallLimitResponse');

export type CallCommandDeps = Readonly<{ commands: CallCommands; calls: CallQueries; recordingUrls: RecordingUrls }>;

/** Placing and ending calls (docs/calls.md#placing-a-call), web calls, and a parent's cap on a sub-account's calls. */
export function callCommandRoutes(api: Api, d: CallCommandDeps): void {
  const tag = 'calls';

  api.route({
    method: 'post',
    path: '/v1/calls',
    tag,
    summary: "Places an outbound call from the agent's number (X-Sub-Account-Id: as a sub-account)",
    body: CreateOutboundCall,
    response: OutboundCallResponse,
    errors: [404, 409, 422, 429, 502],
    handler: async ({ body, ctx, req }) => {
      const callId = await d.commands.placeOutbound(ctx, {
        agentId: body.agentId,
        toNumber: body.toNumber,
        fromNumberId: body.fromNumberId ?? null,
        ...(body.initialGreeting !== undefined ? { greeting: body.initialGreeting } : {}),
        voice: body.voice ?? null,
        systemPrompt: body.systemPrompt || null,
        modelTier: body.modelTier ?? null,
        variables: body.variables ?? null,
        callScreeningIdentity: body.callScreeningIdentity ?? null,
        callScreeningPurpose: body.callScreeningPurpose ?? null,
        disableRecording: body.disableRecording ?? false,
        metadata: body.metadata ?? null,
      });
      const c = body.waitForCompletion
        ? await d.calls.waitForEnd(ctx.accountId, callId, (body.maxWaitSeconds ?? MAX_WAIT_SECONDS) * 1000)
        : await d.calls.get(ctx.accountId, callId);
      if (!c) throw new DomainError('CALL_NOT_FOUND', 'Call not found');
      return { ...withRecordingUrl(c, d.recordingUrls, req), callId };
    },
  });

  api.route({
    method: 'post',
    path: '/v1/calls/web',
    tag,
    summary: 'Creates a browser call with the agent; the browser joins with the access token within 30 seconds',
    body: CreateWebCall,
    response: WebCallResponse,
    errors: [404, 422],
    handler: async ({ body, ctx }) =>
      d.commands.createWebCall(ctx, { agentId: body.agentId, metadata: body.metadata ?? null, variables: body.variables ?? null }),
  });

  api.route({
    method: 'post',
    path: '/v1/calls/:call_id/end',
    tag,
    summary: 'Hangs up a live call (a call that has ended is answered as it is)',
    params: CallIdParams,
    response: CallDetail,
    errors: [404],
    handler: async ({ params, ctx, req }) => {
      await d.commands.end(ctx, params.call_id);
      const c = await d.calls.waitForEnd(ctx.accountId, params.call_id, 10_000);
      if (!c) throw new DomainError('CALL_NOT_FOUND', 'Call not found');
      return withRecordingUrl(c, d.recordingUrls, req);
    },
  });

  api.route({
    method: 'put',
    path: '/v1/sub-accounts/:sub_account_id/call-limit',
    tag,
    summary: "Caps a sub-account's live outbound calls (they also count toward this account's cap)",
    params: SubAccountParams,
    body: CallLimitBody,
    response: CallLimitResponse,
    errors: [404],
    handler: async ({ params, body, ctx }) => {
      await d.commands.setSubAccountCallLimit(ctx, params.sub_account_id, body.maxConcurrentCalls);
      const now = await d.commands.subAccountCallLimit(ctx, params.sub_account_id);
      return { subAccountId: params.sub_account_id, maxConcurrentCalls: now.limit, live: now.live, own: now.own };
    },
  });
}

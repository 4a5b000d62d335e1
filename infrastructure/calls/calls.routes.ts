import type { Request } from 'express';
import type { AccountQueries } from '../../application/accounts/account-queries.port.js';
import type { AgentQueries } from '../../application/agents/agent-queries.port.js';
import type { CallQueries, CallView } from '../../application/calls/call-queries.port.js';
import type { RecordingAccess } from '../../application/calls/recording-access.js';
import type { RecordingStore } from '../../application/calls/recordings.port.js';
import type { NumberQueries } from '../../application/numbers/number-queries.port.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { DomainError } from '../../domain/shared/errors.js';
import { adminSettingsRoutes } from '../http/admin-settings.routes.js';
import type { Api } from '../http/api.js';
import { fromZod } from '../http/errors.js';
import { z } from '../http/openapi.js';
import { offsetQuery, toOffsetPage } from '../http/pagination.js';
import { NumberIdParams } from '../numbers/number.schemas.js';
import {
  AgentIdParams,
  CallDetail,
  CallIdParams,
  CallListQuery,
  CallListResponse,
  CallTranscript,
  GetCallQuery,
  RecordingQuery,
  TranscriptStreamHeaders,
} from './call.schemas.js';
import type { RecordingUrls } from './recording-urls.js';
import { streamTranscript, type TranscriptFeed, type TranscriptStreamOptions } from './transcript-stream.js';

export type CallReadDeps = Readonly<{
  calls: CallQueries;
  numbers: NumberQueries;
  agents: AgentQueries;
  recordingUrls: RecordingUrls;
  log: LoggerPort;
  stream: TranscriptStreamOptions;
  feed: TranscriptFeed;
}>;

const callNotFound = () => new DomainError('CALL_NOT_FOUND', 'Call not found');

/** Where this server is reached, as the request saw it (express honours the forwarding headers of TRUST_PROXY). */
const requestBase = (req: Request) => `${req.protocol}://${req.host}`;

/** The record as the API answers it: a completed call with stored audio carries its signed recording URL. */
export const withRecordingUrl = (c: CallView, urls: RecordingUrls, req: Request) => ({
  ...c,
  recordingUrl: c.status === 'completed' && c.recordingAvailable ? urls.url(c.id, requestBase(req)) : null,
});

/** Reading calls: lists, the record, its transcript and live stream (docs/calls.md); a number's history (docs/numbers.md). */
export function callRoutes(api: Api, d: CallReadDeps): void {
  const tag = 'calls';

  api.route({
    method: 'get',
    path: '/v1/numbers/:number_id/calls',
    tag,
    summary: "The number's calls, newest first",
    params: NumberIdParams,
    query: offsetQuery(),
    response: CallListResponse,
    errors: [404],
    handler: async ({ params, query, ctx }) => {
      if (!(await d.numbers.get(ctx.accountId, params.number_id)))
        throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
      return toOffsetPage(await d.calls.calls(ctx.accountId, params.number_id, query), query);
    },
  });

  api.route({
    method: 'get',
    path: '/v1/calls',
    tag,
    summary: "The account's calls, newest first (X-Sub-Account-Id: a sub-account's)",
    query: CallListQuery,
    response: CallListResponse,
    handler: async ({ query, ctx }) => {
      const { limit, offset, ...filter } = query;
      return toOffsetPage(await d.calls.list(ctx.accountId, filter, { limit, offset }), query);
    },
  });

  api.route({
    method: 'get',
    path: '/v1/agents/:agent_id/calls',
    tag,
    summary: "The agent's calls, newest first",
    params: AgentIdParams,
    query: offsetQuery(),
    response: CallListResponse,
    errors: [404],
    handler: async ({ params, query, ctx }) => {
      if (!(await d.agents.get(ctx.accountId, params.agent_id))) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
      return toOffsetPage(await d.calls.list(ctx.accountId, { agentId: params.agent_id }, query), query);
    },
  });

  api.route({
    method: 'get',
    path: '/v1/calls/:call_id',
    tag,
    summary: 'A call with its transcripts and turns; with wait=true, answered once the call has ended or the timeout has passed',
    params: CallIdParams,
    query: GetCallQuery,
    response: CallDetail,
    errors: [404],
    handler: async ({ params, query, ctx, req, res }) => {
      let c: CallView | null;
      if (query.wait) {
        // a client that goes away stops the wait (and its polling) at once
        const gone = new AbortController();
        const stop = () => gone.abort();
        res.on('close', stop);
        try {
          c = await d.calls.waitForEnd(ctx.accountId, params.call_id, query.timeout * 1000, { signal: gone.signal });
        } finally {
          res.off('close', stop);
        }
      } else {
        c = await d.calls.get(ctx.accountId, params.call_id);
      }
      if (!c) throw callNotFound();
      return withRecordingUrl(c, d.recordingUrls, req);
    },
  });

  api.route({
    method: 'get',
    path: '/v1/calls/:call_id/transcript',
    tag,
    summary: 'The whole transcript of a call, in order, as heard, with every turn',
    params: CallIdParams,
    response: CallTranscript,
    errors: [404],
    handler: async ({ params, ctx }) => {
      const t = await d.calls.transcript(ctx.accountId, params.call_id);
      if (!t) throw callNotFound();
      // `data` beside `transcripts` for the clients that read that name (docs/compatibility.md#extra-answer-fields)
      return { ...t, data: t.transcripts };
    },
  });

  api.rawGet({
    path: '/v1/calls/:call_id/transcript/stream',
    tag,
    summary: "A call's transcript as Server-Sent Events, live or after the end",
    description:
      'Events: `connected` ({callId, status}); a `turn` (a CallTurn with callId) per turn, the recorded ones at once, then each new one; ' +
      '`ended` ({callId, status, endedAt, durationSeconds, disconnectionReason}) when the call is over, then the stream closes. ' +
      "Each event's id is the sequence number of the latest turn sent: a client reconnecting with Last-Event-ID gets only later turns. " +
      'A `: heartbeat` comment comes every 15 s. An API key holds at most TRANSCRIPT_STREAMS_PER_KEY open streams per server process ' +
      '(20 by default); one more is refused 429.',
    params: CallIdParams,
    headers: TranscriptStreamHeaders,
    content: { mediaType: 'text/event-stream', schema: z.string(), description: 'Server-Sent Events' },
    errors: [404, 429],
    handler: async ({ params, ctx, req, res }) => {
      const headers = TranscriptStreamHeaders.safeParse({ 'last-event-id': req.get('last-event-id') });
      if (!headers.success) throw fromZod('header', headers.error);
      const lastEventId = headers.data['last-event-id'];
      await streamTranscript(
        res,
        { queries: d.calls, feed: d.feed, log: d.log },
        {
          accountId: ctx.accountId,
          key: ctx.actor,
          callId: params.call_id,
          afterSeq: lastEventId === undefined ? 0 : Number(lastEventId),
        },
        d.stream,
      );
    },
  });
}

const RecordingAccessSettings = z
  .object({
    byCallId: z
      .boolean()
      .openapi({ description: "true: the call's id alone opens its recording; false (the default): only the signed URL" }),
  })
  .openapi('RecordingAccessSettings');

/**
 * The recording's audio (docs/calls.md#recordings): for anyone holding a valid signed URL, and, for an account whose
 * operator allowed it, for anyone holding the call's id, as the public SDK asks (docs/compatibility.md#recordings-by-call-id).
 */
export function recordingRoutes(
  api: Api,
  d: Readonly<{ recordings: RecordingStore; recordingUrls: RecordingUrls; access: RecordingAccess }>,
): void {
  api.rawGet({
    path: '/v1/calls/:call_id/recording',
    tag: 'calls',
    auth: false,
    summary: "A completed call's recording (WAV), through the signed recordingUrl of the call record; no API key",
    description:
      'The URL is the credential: `expires` (Unix seconds) and `signature` come with the `recordingUrl` of the call record. ' +
      "Without them, the call's id alone opens the recording of an account whose operator allowed it. " +
      'Anything else, or a call without stored audio, is a 404 RECORDING_NOT_FOUND saying which.',
    params: CallIdParams,
    query: RecordingQuery,
    content: {
      mediaType: 'audio/wav',
      schema: z.string().openapi({ format: 'binary' }),
      description: 'the recording, 16-bit PCM mono WAV',
    },
    errors: [404],
    handler: async ({ params, query, res }) => {
      const signed = query.expires !== undefined || query.signature !== undefined;
      if (signed && !d.recordingUrls.verify(params.call_id, query.expires, query.signature))
        throw new DomainError(
          'RECORDING_NOT_FOUND',
          "This recording URL's signature is not valid for this call, or its time has passed. Get a fresh recordingUrl from the call record (GET /v1/calls/{id}) and use it as it is",
        );
      const r = await d.recordings.get(params.call_id);
      const open = r && (signed || (await d.access.of(r.accountId)).byCallId);
      if (!open)
        throw new DomainError(
          'RECORDING_NOT_FOUND',
          signed
            ? 'This call has no stored recording: a call is recorded when its account has the recording add-on, and its recording is ready once the call has completed'
            : "A recording is fetched with the signed recordingUrl of its call record (GET /v1/calls/{id}), unless the account's operator let a call's id alone open it (docs/compatibility.md)",
        );
      res.status(200);
      res.setHeader('Content-Type', 'audio/wav');
      res.setHeader('Content-Disposition', `attachment; filename=recording-${r.callId}.wav`);
      res.setHeader('Content-Length', String(r.wav.byteLength));
      res.setHeader('Cache-Control', 'private, max-age=300');
      res.end(Buffer.from(r.wav.buffer, r.wav.byteOffset, r.wav.byteLength));
    },
  });
}

/** The operator's setting of who may fetch an account's recordings (docs/calls.md#recordings). */
export function recordingAccessAdminRoutes(api: Api, d: Readonly<{ accounts: AccountQueries; access: RecordingAccess }>): void {
  adminSettingsRoutes(api, {
    accounts: d.accounts,
    segment: 'recordings',
    summaries: {
      get: "Who may fetch the account's call recordings",
      patch: "Lets the call's id alone open the account's recordings (as the public SDK asks), or requires the signed URL again",
    },
    response: RecordingAccessSettings,
    body: RecordingAccessSettings,
    read: (accountId) => d.access.of(accountId),
    change: (ctx, accountId, body) => d.access.set(ctx, accountId, body.byCallId),
  });
}

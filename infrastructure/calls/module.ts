import { hostname } from 'node:os';
import { callHistory } from '../../application/calls/call.history.js';
import { callWebhookMappings } from '../../application/calls/call.mappings.js';
import { CallCommands } from '../../application/calls/call-commands.js';
import { CallHost, type LiveCallPlan } from '../../application/calls/call-host.js';
import { CallRecordingProcess } from '../../application/calls/call-recordings.js';
import { CallSlotRelease } from '../../application/calls/call-slot-release.js';
import { CallSlots } from '../../application/calls/call-slots.js';
import { RecordingAccess } from '../../application/calls/recording-access.js';
import { ModelReplies, WebhookReplies } from '../../application/calls/replies.js';
import { KyselyCallQueries } from '../../projections/calls/call.queries.js';
import { callsProjector } from '../../projections/calls/calls.projector.js';
import { ACCOUNTS } from '../accounts/tokens.js';
import { secretKeys } from '../adapters/secret-keys.js';
import { AGENTS } from '../agents/tokens.js';
import type { Capability } from '../capabilities/capability.js';
import { placesCalls, sipConfigured } from '../config/config.js';
import * as m080 from '../db/migrations/080-calls.js';
import * as m089 from '../db/migrations/089-call-leases.js';
import * as m090 from '../db/migrations/090-turn-speech-latency.js';
import * as m091 from '../db/migrations/091-call-leg-report.js';
import * as m144 from '../db/migrations/144-unheld-calls.js';
import { httpError } from '../http/errors.js';
import { languageModelFromConfig } from '../llm/language-model-from-config.js';
import { NUMBERS } from '../numbers/tokens.js';
import { PLATFORM } from '../platform/tokens.js';
import { UnconfiguredVoiceEngine } from '../providers/unconfigured-voice-engine.js';
import { isTransient } from '../reactors/isolation.js';
import { RECORDING_ADDON } from '../recording-addon/tokens.js';
import { SANDBOX } from '../sandbox/tokens.js';
import { SIP } from '../sip/tokens.js';
import { SIP_TRUNKS } from '../sip-trunks/tokens.js';
import { textToSpeechFromConfig } from '../speech/module-support.js';
import { destinations } from '../webhooks/module.js';
import { WEBHOOKS } from '../webhooks/tokens.js';
import { callCommandRoutes } from './call-commands.routes.js';
import { CallDialler } from './call-dialler.js';
import { CallSweeper } from './call-sweeper.js';
import { callRoutes, recordingAccessAdminRoutes, recordingRoutes } from './calls.routes.js';
import { KyselyCallLeases, KyselyWebCallTokens } from './kysely-call-live.js';
import { KyselyRecordingStore } from './kysely-recording-store.js';
import { RecordingUrls } from './recording-urls.js';
import { SpeechRecordingRenderer } from './speech-recording-renderer.js';
import { CALLS } from './tokens.js';
import { type CallVersions, TranscriptFeed } from './transcript-stream.js';
import { HttpVoiceWebhookClient } from './voice-webhook-client.js';

/** the transcript stream's heartbeat (docs/calls.md#transcripts-and-the-live-stream) */
const TRANSCRIPT_STREAM = { heartbeatMs: 15_000 } as const;
/** how often open transcript streams look at their calls when no projection woke them */
const TRANSCRIPT_FALLBACK_MS = 2000;

/**
 * Voice calls (docs/calls.md). The read side: the `calls` and `call_turns` read models, the account's and an
 * agent's call lists, a number's call history, the call record (and its long-poll), the transcript and its live
 * stream; the recording step (a process manager rendering a recorded call's audio once it has ended) and the
 * recording's signed public URL.
 */
export const calls = {
  name: 'calls',
  bind: (b, cfg) => {
    // the write side: the engine, this process's live calls, the caps, and placing/ending calls (docs/calls.md)
    if (cfg.PROVIDER_MODE === 'sandbox') b.alias(CALLS.Engine, SANDBOX.VoiceEngine);
    else if (sipConfigured(cfg)) b.alias(CALLS.Engine, SIP.Engine);
    else b.value(CALLS.Engine, new UnconfiguredVoiceEngine());
    b.value(CALLS.VoiceWebhook, new HttpVoiceWebhookClient(destinations(cfg)));
    b.value(CALLS.LanguageModel, languageModelFromConfig(cfg));
    b.factory(CALLS.Leases, (r) => new KyselyCallLeases(r(PLATFORM.ReadDb)));
    b.factory(CALLS.WebTokens, (r) => new KyselyWebCallTokens(r(PLATFORM.ReadDb)));
    b.factory(
      CALLS.Slots,
      (r) =>
        new CallSlots(r(PLATFORM.Executor), {
          perAccount: cfg.CALL_MAX_CONCURRENT_PER_ACCOUNT,
          perNumber: cfg.CALL_MAX_CONCURRENT_PER_NUMBER,
        }),
    );
    b.factory(CALLS.Host, (r) => {
      const ids = r(PLATFORM.Ids);
      const repliesFor = (plan: LiveCallPlan) =>
        plan.settings.mode === 'hosted'
          ? new ModelReplies({
              model: r(CALLS.LanguageModel),
              tier: plan.settings.modelTier,
              systemPrompt: plan.settings.systemPrompt ?? '',
            })
          : new WebhookReplies(plan, {
              webhooks: r(WEBHOOKS.Queries),
              secrets: r(WEBHOOKS.Secrets),
              client: r(CALLS.VoiceWebhook),
              clock: r(PLATFORM.Clock),
              webhookIdOf: (turnId) => ids.derived('whv', plan.callId, turnId),
            });
      return new CallHost({
        engine: r(CALLS.Engine),
        exec: r(PLATFORM.Executor),
        clock: r(PLATFORM.Clock),
        ids,
        log: r(PLATFORM.Logger),
        slots: r(CALLS.Slots),
        leases: r(CALLS.Leases),
        hostId: `${hostname()}:${process.pid}:${ids.uuid().slice(0, 8)}`,
        leaseMs: cfg.CALL_HOST_LEASE_MS,
        dials: placesCalls(cfg),
        repliesFor,
        isTransient,
        // a bridged call's relayed audio is its recording (docs/sip.md#recording-bridged-calls)
        recordings: r(CALLS.Recordings),
      });
    });
    b.factory(
      CALLS.Commands,
      (r) =>
        new CallCommands({
          exec: r(PLATFORM.Executor),
          ids: r(PLATFORM.Ids),
          clock: r(PLATFORM.Clock),
          agents: r(AGENTS.Queries),
          numbers: r(NUMBERS.Queries),
          trunks: r(SIP_TRUNKS.Queries),
          accounts: r(ACCOUNTS.Queries),
          slots: r(CALLS.Slots),
          host: r(CALLS.Host),
          leases: r(CALLS.Leases),
          webTokens: r(CALLS.WebTokens),
          recordingActive: (accountId, at) => r(RECORDING_ADDON.Queries).isActive(accountId, at),
          random: Math.random,
          limits: {
            maxDurationSeconds: cfg.CALL_MAX_DURATION_SECONDS,
            ringTimeoutMs: cfg.CALL_RING_TIMEOUT_SECONDS * 1000,
            webTokenTtlMs: 30_000,
          },
        }),
    );
    b.factory(CALLS.Queries, (r) => new KyselyCallQueries(r(PLATFORM.ReadDb)));
    b.factory(CALLS.TranscriptFeed, (r) => {
      const db = r(PLATFORM.ReadDb);
      const versions: CallVersions = async (ids) => {
        const rows = await db.selectFrom('calls').select(['call_id', 'status', 'turn_count']).where('call_id', 'in', ids).execute();
        return new Map(rows.map((x) => [x.call_id, `${x.status}:${x.turn_count}`]));
      };
      const listen = (wake: () => void) =>
        r(PLATFORM.AppendSignals).listenProjected((n) => {
          if (n.projector === callsProjector.name) wake();
        });
      return new TranscriptFeed(versions, listen, r(PLATFORM.Logger), {
        perKey: cfg.TRANSCRIPT_STREAMS_PER_KEY,
        fallbackMs: TRANSCRIPT_FALLBACK_MS,
      });
    });
    b.alias(CALLS.NumberCalls, CALLS.Queries);
    b.factory(CALLS.Recordings, (r) => new KyselyRecordingStore(r(PLATFORM.ReadDb)));
    b.value(
      CALLS.RecordingRenderer,
      new SpeechRecordingRenderer(
        textToSpeechFromConfig(cfg),
        // sandbox calls are timed at the sandbox voice's speed: their recordings are spoken at it too
        cfg.PROVIDER_MODE === 'sandbox' ? { wordsPerMinute: cfg.SANDBOX_VOICE_WORDS_PER_MINUTE } : {},
      ),
    );
    b.factory(CALLS.RecordingAccess, (r) => new RecordingAccess(r(PLATFORM.Executor)));
    b.factory(
      CALLS.RecordingUrls,
      (r) =>
        new RecordingUrls(secretKeys(cfg.SECRETS_KEY).recordingUrls, r(PLATFORM.BaseClock), {
          ttlSeconds: cfg.RECORDING_URL_TTL_SECONDS,
          publicUrl: cfg.PUBLIC_URL,
        }),
    );
  },
  routes: {
    v1: (api, r) => {
      callCommandRoutes(api, { commands: r(CALLS.Commands), calls: r(CALLS.Queries), recordingUrls: r(CALLS.RecordingUrls) });
      callRoutes(api, {
        calls: r(CALLS.Queries),
        numbers: r(NUMBERS.Queries),
        agents: r(AGENTS.Queries),
        recordingUrls: r(CALLS.RecordingUrls),
        log: r(PLATFORM.Logger),
        stream: TRANSCRIPT_STREAM,
        feed: r(CALLS.TranscriptFeed),
      });
    },
    public: (api, r) =>
      recordingRoutes(api, { recordings: r(CALLS.Recordings), recordingUrls: r(CALLS.RecordingUrls), access: r(CALLS.RecordingAccess) }),
    admin: (api, r) => recordingAccessAdminRoutes(api, { accounts: r(ACCOUNTS.Queries), access: r(CALLS.RecordingAccess) }),
  },
  projectors: [callsProjector],
  reactors: (r) => [
    new CallRecordingProcess(r(PLATFORM.Executor), r(CALLS.RecordingRenderer), r(CALLS.Recordings), r(PLATFORM.Logger)),
    new CallSlotRelease(r(CALLS.Slots), r(ACCOUNTS.Queries)),
  ],
  lineWorkers: (r, cfg) =>
    placesCalls(cfg) && sipConfigured(cfg)
      ? [
          new CallDialler(
            { host: r(CALLS.Host), commands: r(CALLS.Commands), leases: r(CALLS.Leases) },
            r(PLATFORM.Logger),
            cfg.CALL_DIAL_POLL_MS,
          ),
        ]
      : [],
  workers: (r, cfg) => [
    new CallSweeper(
      {
        host: r(CALLS.Host),
        commands: r(CALLS.Commands),
        leases: r(CALLS.Leases),
        unheldAfterMs: cfg.CALL_HOST_LEASE_MS,
        webTokens: r(CALLS.WebTokens),
        clock: r(PLATFORM.Clock),
        ids: r(PLATFORM.Ids),
      },
      r(PLATFORM.Logger),
      cfg.CALL_SWEEP_INTERVAL_MS,
    ),
  ],
  webhookMappings: callWebhookMappings,
  histories: () => [{ view: callHistory, path: '/v1/calls/:call_id/history', param: 'call_id', what: 'a call' }],
  close: async (r) => {
    await r(CALLS.Host).close();
    const client = r(CALLS.VoiceWebhook);
    if (client instanceof HttpVoiceWebhookClient) client.close();
  },
  migrations: {
    '080-calls': m080,
    '089-call-leases': m089,
    '090-turn-speech-latency': m090,
    '091-call-leg-report': m091,
    '144-unheld-calls': m144,
  },
  errors: {
    CALL_NOT_LIVE: { ...httpError.conflict, fix: 'The call has already ended; GET /v1/calls/{id} shows how.' },
    CALL_CONCURRENCY_LIMIT: {
      status: 429,
      shape: 'plain',
      type: 'rate_limit_error',
      fix: 'Wait for a live call to end (GET /v1/calls?status=in-progress lists them), then place the call again.',
    },
    NUMBER_CALL_LIMIT: {
      ...httpError.plainConflict,
      fix: "Wait for a call on this number to end, or call from another of the agent's numbers (fromNumberId).",
    },
    CALL_NOT_FOUND: { ...httpError.notFound, fix: 'Check the call id: GET /v1/calls lists the calls of this account.' },
    TRANSCRIPT_STREAM_LIMIT: {
      status: 429,
      shape: 'plain',
      type: 'rate_limit_error',
      fix: 'Close a transcript stream of this key (or use another key); the limit is TRANSCRIPT_STREAMS_PER_KEY per server process.',
    },
    WEB_CALL_TOKEN_INVALID: {
      status: 401,
      shape: 'envelope',
      type: 'authentication_error',
      fix: 'Create a web call (POST /v1/calls/web) and join within 30 seconds with the accessToken it answers; each token joins once.',
    },
    RECORDING_NOT_FOUND: {
      ...httpError.notFound,
      fix: 'Read the call again (GET /v1/calls/{id}) for a fresh recordingUrl; recordingAvailable says whether audio exists.',
    },
  },
} as const satisfies Capability;

import type { CallCommands } from '../../application/calls/call-commands.js';
import type { CallHost, CallLeasesPort } from '../../application/calls/call-host.js';
import type { CallQueries, NumberCallQueries } from '../../application/calls/call-queries.port.js';
import type { CallSlots } from '../../application/calls/call-slots.js';
import type { LanguageModelPort } from '../../application/calls/language-model.port.js';
import type { RecordingAccess } from '../../application/calls/recording-access.js';
import type { RecordingRenderer, RecordingStore } from '../../application/calls/recordings.port.js';
import type { VoiceEnginePort } from '../../application/calls/voice-engine.port.js';
import type { VoiceWebhookPort } from '../../application/calls/voice-webhook.port.js';
import { token } from '../capabilities/token.js';
import type { KyselyWebCallTokens } from './kysely-call-live.js';
import type { RecordingUrls } from './recording-urls.js';
import type { TranscriptFeed } from './transcript-stream.js';

/** The calls capability's tokens (its module binds them). */
export const CALLS = {
  /** the read side of calls (docs/calls.md): lists, records, transcripts, the long-poll */
  Queries: token<CallQueries>('CallQueries'),
  TranscriptFeed: token<TranscriptFeed>('TranscriptFeed'),
  /** a number's call history, as the numbers capability shows it (the same queries) */
  NumberCalls: token<NumberCallQueries>('NumberCallQueries'),
  /** stored recordings (`call_recordings`) */
  Recordings: token<RecordingStore>('RecordingStore'),
  RecordingRenderer: token<RecordingRenderer>('RecordingRenderer'),
  /** signs and checks recording URLs */
  RecordingUrls: token<RecordingUrls>('RecordingUrls'),
  /** the telephony and speech engine (the sandbox engine in sandbox mode) */
  Engine: token<VoiceEnginePort>('VoiceEnginePort'),
  /** this process's live calls */
  Host: token<CallHost>('CallHost'),
  Commands: token<CallCommands>('CallCommands'),
  Slots: token<CallSlots>('CallSlots'),
  /** who may fetch an account's recordings (docs/calls.md#recordings) */
  RecordingAccess: token<RecordingAccess>('RecordingAccess'),
  Leases: token<CallLeasesPort>('CallLeasesPort'),
  WebTokens: token<KyselyWebCallTokens>('WebCallTokens'),
  VoiceWebhook: token<VoiceWebhookPort>('VoiceWebhookPort'),
  LanguageModel: token<LanguageModelPort>('LanguageModelPort'),
} as const;
